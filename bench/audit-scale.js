// The admin activity log at 10 million events: p99 of the common queries at 10 k and at 10 M events.
//   npm run bench:audit        needs PostgreSQL: BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres
//   AUDIT_EVENTS=1000000       a smaller large size;  BENCH_REPEAT=…  requests per query (200)
//   BENCH_FRESH=1              rebuild the databases instead of reusing them
// Each size gets its own database (waygate_bench_audit_<size>), migrated and filled once by generate_series:
// events over 1,000 users, 6 types, 2 sources, 10% failures, one per second back from the load, and 100
// reported events. Each query runs through the service (GET /v1/admin/audit via inject, serialisation
// included) after a warm-up, and the plans of its statements are checked for sequential scans of
// audit_events. Goal: p99 at 10 M no worse than 2x the p99 at 10 k. audit_events is partitioned by month
// (migration 0038): the load makes the months it needs first.
import { sql } from 'kysely';
import {
  benchApp,
  captureStatements,
  keptDatabase,
  p99Of,
  ratiosOf,
  reportScans,
  sequentialScans,
  writeResult,
} from './lib.js';

const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SIZES = [10_000, Number(process.env.AUDIT_EVENTS ?? 10_000_000)];
const REPEAT = Number(process.env.BENCH_REPEAT ?? 200);
const USERS = 1000;
const BATCH = 500_000;

/**
 * Monthly partitions for the events about to go in, one per second back from now (the migration made months
 * from this month on; an upgraded log has a month for each of its months): the catch-all before them is made
 * again to end at the oldest, and the months up to this one are added.
 */
async function monthsBack(db, size) {
  const first = sql`utc_month(now() - make_interval(secs => ${size}))`;
  const old = (
    await sql`select month_partitions_replace_catch_all('audit_events', 'before', ${first}) as old`.execute(db)
  ).rows[0].old;
  await sql`drop table ${sql.id(old)}`.execute(db);
  await sql`
    select month_partitions_create('audit_events', utc_month(${first}, k)) from generate_series(0, 1200) k
    where utc_month(${first}, k) < (select min(month) from month_partitions('audit_events'))`.execute(db);
}

async function fill(db, size) {
  await sql`delete from audit_reports`.execute(db);
  await sql`delete from audit_events`.execute(db);
  await monthsBack(db, size);
  await sql`insert into users (username) select 'sailor_' || i from generate_series(1, ${USERS}) i on conflict do nothing`.execute(
    db,
  );
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
    insert into audit_reports (audit_event_id, audit_event_created_at, user_id, reason)
    select e.id, e.created_at, e.user_id::uuid, 'suspicious' from audit_events e
    where e.id in (select id from audit_events order by created_at desc offset 5 limit 100)`.execute(db);
  await sql`vacuum analyze audit_events`.execute(db);
  await sql`analyze audit_reports`.execute(db);
}

/** The migrated database of one size, filled on first use. */
const databaseOf = (size) =>
  keptDatabase(ADMIN_URL, `waygate_bench_audit_${size}`, {
    filled: async (db) =>
      (await sql`select count(*)::int as n from audit_events where user_agent = 'bench/1.0'`.execute(db)).rows[0].n ===
      size,
    fill: (db) => {
      console.log(`loading ${size.toLocaleString('en')} events`);
      return fill(db, size);
    },
  });

async function measure(size) {
  const { config, database, url } = await databaseOf(size);
  const captured = captureStatements(database.db, 'audit_events');
  const app = await benchApp(config, database);
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
    const { p99_ms, last } = await p99Of(name, () => app.get(`/v1/admin/audit${query}`), REPEAT);
    results[name] = {
      p99_ms,
      total_count: last.json().total_count,
      estimated: last.headers['x-total-count-estimated'] === 'true',
    };
  }
  captured.capturing = true;
  for (const query of Object.values(queries)) await app.get(`/v1/admin/audit${query}`);
  const scans = await sequentialScans(url, captured.statements, 'audit_events');
  await app.close();
  await database.close();
  console.log(`\n${size.toLocaleString('en')} events`);
  console.table(results);
  reportScans(scans, 'audit_events');
  return { results, sequential_scans: scans };
}

const summary = {};
for (const size of SIZES) summary[size] = await measure(size);
const ratios = ratiosOf(summary, SIZES, 2);
writeResult('audit-scale', { sizes: SIZES, repeat: REPEAT, summary, ratios });
