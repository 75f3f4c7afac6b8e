// The admin activity log at 10 million events: p99 of the common queries at 10 k and at 10 M events.
//   npm run bench:audit        needs PostgreSQL: BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres
//   AUDIT_EVENTS=1000000       a smaller large size;  BENCH_REPEAT=…  requests per query (200)
//   BENCH_FRESH=1              rebuild the databases instead of reusing them
// Each size gets its own database (waygate_bench_audit_<size>), migrated and filled once by generate_series:
// events over 1,000 users, 6 types, 2 sources, 10% failures, one per second back from the load, and 100
// reported events. Each query runs through the service (GET /v1/admin/audit via inject, serialisation
// included) after a warm-up, and the plans of its statements are checked for sequential scans of
// audit_events. Goal: p99 at 10 M no worse than 2x the p99 at 10 k.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { buildApp } from '../dist/app.js';
import { loadConfig } from '../dist/config.js';
import { openKeyValueStore } from '../dist/platform/kv/index.js';
import { openMigratedDatabase } from '../dist/server.js';
import { BENCH_ADMIN, serviceEnv } from './service-env.js';

const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SIZES = [10_000, Number(process.env.AUDIT_EVENTS ?? 10_000_000)];
const REPEAT = Number(process.env.BENCH_REPEAT ?? 200);
const USERS = 1000;
const BATCH = 500_000;

const urlOf = (name) => Object.assign(new URL(ADMIN_URL), { pathname: `/${name}` }).toString();

async function fill(db, size) {
  await sql`delete from audit_reports`.execute(db);
  await sql`delete from audit_events`.execute(db);
  await sql`insert into users (username) select 'sailor_' || i from generate_series(1, ${USERS}) i on conflict do nothing`.execute(db);
  for (let start = 1; start <= size; start += BATCH) {
    const end = Math.min(start + BATCH - 1, size);
    await sql`
      insert into audit_events (event_type, user_id, actor_id, resource_type, status, source_service, ip_address, user_agent, metadata, created_at)
      select (array['login','logout','login_failed','user_updated','api_key_created','session_revoked'])[1 + i % 6],
             u.ids[1 + i % ${USERS}], u.ids[1 + i % ${USERS}], 'session',
             case when i % 10 = 0 then 'failure' else 'success' end,
             case when i % 50 = 0 then 'community_bot' else 'api' end,
             '10.0.' || (i % 250) || '.' || (i % 200), 'bench/1.0', '{}',
             now() - make_interval(secs => i)
      from generate_series(${start}::int, ${end}::int) i,
           (select array_agg(id::text order by username) ids from users where username like 'sailor_%') u`.execute(db);
    process.stdout.write(`\r  ${end.toLocaleString('en')} events`);
  }
  process.stdout.write('\n');
  await sql`
    insert into audit_reports (audit_event_id, user_id, reason)
    select e.id, e.user_id::uuid, 'suspicious' from audit_events e
    where e.id in (select id from audit_events order by created_at desc offset 5 limit 100)`.execute(db);
  await sql`vacuum analyze audit_events`.execute(db);
  await sql`analyze audit_reports`.execute(db);
}

/** The migrated database of one size, filled on first use. */
async function databaseOf(size) {
  const name = `waygate_bench_audit_${size}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  if (process.env.BENCH_FRESH) await admin.query(`drop database if exists ${name} with (force)`);
  if ((await admin.query('select 1 from pg_database where datname = $1', [name])).rowCount === 0) await admin.query(`create database ${name}`);
  await admin.end();
  const config = loadConfig({ ...serviceEnv, DATABASE_URL: urlOf(name), DATA_DIR: mkdtempSync(join(tmpdir(), 'waygate-bench-audit-')) });
  const { database } = await openMigratedDatabase(config);
  const { n } = (await sql`select count(*)::int as n from audit_events where user_agent = 'bench/1.0'`.execute(database.db)).rows[0];
  if (n !== size) {
    console.log(`loading ${size.toLocaleString('en')} events into ${name}`);
    await fill(database.db, size);
  }
  return { config, database, url: urlOf(name) };
}

/** The service's SELECTs on audit_events while `capturing`, to EXPLAIN them afterwards. */
function captureStatements(db) {
  const state = { capturing: false, statements: [] };
  const executor = db.getExecutor();
  const execute = executor.executeQuery.bind(executor);
  executor.executeQuery = async (compiled, queryId) => {
    if (state.capturing && compiled.sql.startsWith('select') && compiled.sql.includes('from "audit_events"')) state.statements.push(compiled);
    return execute(compiled, queryId);
  };
  return state;
}

async function sequentialScans(url, statements) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const scans = [];
  for (const statement of statements) {
    const { rows } = await client.query(`explain ${statement.sql}`, statement.parameters);
    const plan = rows.map((row) => row['QUERY PLAN']).join('\n');
    if (plan.includes('Seq Scan on audit_events')) scans.push({ sql: statement.sql.slice(0, 200), plan });
  }
  await client.end();
  return scans;
}

const p99 = (times) => [...times].sort((a, b) => a - b)[Math.ceil(times.length * 0.99) - 1];

async function measure(size) {
  const { config, database, url } = await databaseOf(size);
  const captured = captureStatements(database.db);
  const kv = await openKeyValueStore({ kind: 'memory' });
  const app = await buildApp(config, { database, kv }, { logger: false });
  const token = (await app.inject({ method: 'POST', url: '/v1/auth/login', payload: { identifier: BENCH_ADMIN.username, password: BENCH_ADMIN.password } })).json().session_token;
  const someUser = (await sql`select id from users where username = 'sailor_7'`.execute(database.db)).rows[0].id;
  const newest = (await sql`select max(created_at) as at from audit_events`.execute(database.db)).rows[0].at.getTime();
  const queries = {
    'newest first': '',
    'event_type=login_failed': '?event_type=login_failed',
    user_id: `?user_id=${someUser}`,
    'user_search=username': '?user_search=sailor_7',
    'status=failure': '?status=failure',
    'source_service=community_bot': '?source_service=community_bot',
    'last hour': `?start_date=${new Date(newest - 3_600_000).toISOString()}&end_date=${new Date(newest).toISOString()}`,
    'sort by event_type': '?sort_field=event_type&sort_direction=asc',
    'is_reported=true': '?is_reported=true',
    'page 50': '?page=50',
  };
  const results = {};
  for (const [name, query] of Object.entries(queries)) {
    const request = () => app.inject({ method: 'GET', url: `/v1/admin/audit${query}`, headers: { authorization: `Bearer ${token}` } });
    for (let i = 0; i < 20; i++) await request();
    const times = [];
    let last;
    for (let i = 0; i < REPEAT; i++) {
      const began = performance.now();
      last = await request();
      times.push(performance.now() - began);
    }
    if (last.statusCode !== 200) throw new Error(`${name}: ${last.statusCode} ${last.body}`);
    results[name] = { p99_ms: +p99(times).toFixed(2), total_count: last.json().total_count, estimated: last.headers['x-total-count-estimated'] === 'true' };
  }
  captured.capturing = true;
  for (const query of Object.values(queries)) await app.inject({ method: 'GET', url: `/v1/admin/audit${query}`, headers: { authorization: `Bearer ${token}` } });
  const scans = await sequentialScans(url, captured.statements);
  await app.close();
  await kv.close();
  await database.close();
  console.log(`\n${size.toLocaleString('en')} events`);
  console.table(results);
  console.log(scans.length ? scans : 'no sequential scans of audit_events');
  return { results, sequential_scans: scans };
}

const summary = {};
for (const size of SIZES) summary[size] = await measure(size);
const [small, large] = SIZES;
const ratios = Object.fromEntries(Object.keys(summary[small].results).map((name) => [name, +(summary[large].results[name].p99_ms / summary[small].results[name].p99_ms).toFixed(2)]));
console.log(`\np99 at ${large.toLocaleString('en')} / p99 at ${small.toLocaleString('en')} (goal <= 2)`);
console.table(ratios);
mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
writeFileSync(new URL('./results/audit-scale.json', import.meta.url), `${JSON.stringify({ sizes: SIZES, repeat: REPEAT, summary, ratios, node: process.version, at: new Date().toISOString() }, null, 2)}\n`);
