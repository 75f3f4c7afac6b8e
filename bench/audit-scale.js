// The admin activity log at 10 million events: p99 of the common queries at 10 k and at 10 M events.
//   npm run bench:audit            (needs PostgreSQL; BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres)
//   AUDIT_EVENTS=1000000 npm run bench:audit   (a smaller second size)
// A database `waygate_bench_audit` is created (dropped first if it exists), migrated, and filled by
// generate_series with events spread over 1,000 users, 6 types, 2 sources, 10% failures, one per second
// back from now, and 100 reported events. Each query runs through the service (GET /v1/admin/audit via
// inject, serialisation included) BENCH_REPEAT times after a warm-up, and its plan is checked for
// sequential scans on audit_events. Goal: p99 at 10 M no worse than 2x the p99 at 10 k.
import { writeFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { sql } from 'kysely';
import { buildApp } from '../dist/app.js';
import { loadConfig } from '../dist/config.js';
import { openKeyValueStore } from '../dist/platform/kv/index.js';
import { openMigratedDatabase } from '../dist/server.js';
import { BENCH_ADMIN, serviceEnv } from './service-env.js';

const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const DB_NAME = 'waygate_bench_audit';
const SIZES = [10_000, Number(process.env.AUDIT_EVENTS ?? 10_000_000)];
const REPEAT = Number(process.env.BENCH_REPEAT ?? 200);
const USERS = 1000;
const BATCH = 500_000;

const admin = new pg.Client({ connectionString: ADMIN_URL });
await admin.connect();
await admin.query(`drop database if exists ${DB_NAME} with (force)`);
await admin.query(`create database ${DB_NAME}`);
await admin.end();
const url = new URL(ADMIN_URL);
url.pathname = `/${DB_NAME}`;

const config = loadConfig({ ...serviceEnv, DATABASE_URL: url.toString(), DATA_DIR: mkdtempSync(join(tmpdir(), 'waygate-bench-audit-')) });
const { database } = await openMigratedDatabase(config);
const db = database.db;
const kv = await openKeyValueStore({ kind: 'memory' });
const app = await buildApp(config, { database, kv }, { logger: false });
const login = await app.inject({ method: 'POST', url: '/v1/auth/login', payload: { identifier: BENCH_ADMIN.username, password: BENCH_ADMIN.password } });
const token = login.json().session_token;

await sql`insert into users (username) select 'sailor_' || i from generate_series(1, ${USERS}) i`.execute(db);
const someUser = (await sql`select id from users where username = 'sailor_7'`.execute(db)).rows[0].id;

async function fill(from, to) {
  for (let start = from; start <= to; start += BATCH) {
    const end = Math.min(start + BATCH - 1, to);
    await sql`
      insert into audit_events (event_type, user_id, actor_id, resource_type, status, source_service, ip_address, user_agent, metadata, created_at)
      select (array['login','logout','login_failed','user_updated','api_key_created','session_revoked'])[1 + i % 6],
             u.ids[1 + i % ${USERS}], u.ids[1 + i % ${USERS}], 'session',
             case when i % 10 = 0 then 'failure' else 'success' end,
             case when i % 50 = 0 then 'community_bot' else 'api' end,
             '10.0.' || (i % 250) || '.' || (i % 200), 'bench/1.0', '{}',
             now() - make_interval(secs => i)
      from generate_series(${start}::int, ${end}::int) i, (select array_agg(id::text order by username) ids from users where username like 'sailor_%') u`.execute(db);
    process.stdout.write(`\r  ${end.toLocaleString('en')} events`);
  }
  process.stdout.write('\n');
}

async function report(count) {
  await sql`delete from audit_reports`.execute(db);
  await sql`
    insert into audit_reports (audit_event_id, user_id, reason)
    select e.id, e.user_id::uuid, 'suspicious' from audit_events e
    where e.id in (select id from audit_events order by created_at desc offset 5 limit ${count})`.execute(db);
}

const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
const QUERIES = {
  'newest first': '',
  'event_type=login_failed': '?event_type=login_failed',
  'user_id': `?user_id=${someUser}`,
  'user_search=username': '?user_search=sailor_7',
  'status=failure': '?status=failure',
  'source_service=community_bot': '?source_service=community_bot',
  'last hour': `?start_date=${hourAgo}&end_date=${new Date(Date.now() + 60_000).toISOString()}`,
  'sort by event_type': '?sort_field=event_type&sort_direction=asc',
  'is_reported=true': '?is_reported=true',
  'page 50': '?page=50',
};

function p99(times) {
  const sorted = [...times].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)];
}


async function measure(size) {
  const results = {};
  for (const [name, query] of Object.entries(QUERIES)) {
    const request = () => app.inject({ method: 'GET', url: `/v1/admin/audit${query}`, headers: { authorization: `Bearer ${token}` } });
    for (let i = 0; i < 10; i++) await request();
    const times = [];
    let body;
    for (let i = 0; i < REPEAT; i++) {
      const began = performance.now();
      const response = await request();
      times.push(performance.now() - began);
      if (response.statusCode !== 200) throw new Error(`${name}: ${response.statusCode} ${response.body}`);
      body = response;
    }
    results[name] = { p99_ms: +p99(times).toFixed(2), total_count: body.json().total_count, estimated: body.headers['x-total-count-estimated'] === 'true' };
  }
  console.log(`\n${size.toLocaleString('en')} events`);
  console.table(results);
  return results;
}

const plans = {};
/** EXPLAIN of every statement the list runs, looking for a sequential scan of audit_events. */
async function checkPlans() {
  const scans = [];
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  // The statements are the service's own, captured below as they were sent.
  for (const statement of capturedStatements.splice(0)) {
    const { rows } = await client.query(`explain (format text) ${statement.sql}`, statement.parameters);
    const plan = rows.map((row) => row['QUERY PLAN']).join('\n');
    if (/Seq Scan on audit_events/.test(plan)) scans.push({ sql: statement.sql.slice(0, 160), plan });
  }
  await client.end();
  return scans;
}

const capturedStatements = [];
let capture = false;
const executor = db.getExecutor();
const originalExecute = executor.executeQuery.bind(executor);
executor.executeQuery = async (compiled, queryId) => {
  if (capture && /from "audit_events"/.test(compiled.sql) && compiled.sql.startsWith('select')) capturedStatements.push({ sql: compiled.sql, parameters: compiled.parameters });
  return originalExecute(compiled, queryId);
};

const summary = {};
let loaded = 0;
for (const size of SIZES) {
  console.log(`loading ${size.toLocaleString('en')} events`);
  await fill(loaded + 1, size);
  loaded = size;
  await report(100);
  await sql`vacuum analyze audit_events`.execute(db);
  await sql`analyze audit_reports`.execute(db);
  summary[size] = await measure(size);
  capture = true;
  for (const query of Object.values(QUERIES)) await app.inject({ method: 'GET', url: `/v1/admin/audit${query}`, headers: { authorization: `Bearer ${token}` } });
  capture = false;
  plans[size] = await checkPlans();
  console.log(plans[size].length ? plans[size] : 'no sequential scans of audit_events');
}

const [small, large] = SIZES;
const ratios = Object.fromEntries(Object.keys(QUERIES).map((name) => [name, +(summary[large][name].p99_ms / summary[small][name].p99_ms).toFixed(2)]));
console.log(`\np99 at ${large.toLocaleString('en')} / p99 at ${small.toLocaleString('en')} (goal <= 2)`);
console.table(ratios);
mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
writeFileSync(new URL('./results/audit-scale.json', import.meta.url), `${JSON.stringify({ sizes: SIZES, repeat: REPEAT, summary, ratios, sequential_scans: plans, node: process.version, at: new Date().toISOString() }, null, 2)}\n`);
await app.close();
await kv.close();
await database.close();
