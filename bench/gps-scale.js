// GPS point lists at 10 million points: p99 of GET /v1/gps and GET /v1/trips/{id}/gps at 10 k and at 10 M points.
//   npm run bench:gps-scale    needs PostgreSQL: BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres
//   GPS_POINTS=1000000         another large size, or several: GPS_POINTS=10000000,100000000 (100 M: about 36 GB
//                              of disk and half an hour of load here);  BENCH_REPEAT=…  requests per query (200)
//   BENCH_FRESH=1              rebuild the databases instead of reusing them
// Each size gets its own database (waygate_bench_gps_<size>), migrated and filled once by generate_series (not
// HTTP): 100 devices with one completed trip each, so a trip holds 1% of the points (100 at 10 k, 100,000 at
// 10 M); one point every half second back from the load, two points to each second (ties ordered by id). The
// indexes are dropped for the load and made again after it. Each query runs through the service (inject,
// serialisation included) after a warm-up; cursors are taken from the service's own next links. The plans
// of its statements are checked for sequential scans of gps_points. Goal: p99 at 10 M at most 1.5x the p99 at 10 k.
// The sizes take turns request by request (every database open at once), so that load from other work on the
// machine weighs on each size alike; the load average at the start and end is kept with the results.
// gps_points is partitioned by month (migration 0035): the load makes the months it needs first (as the job
// gps-partitions would), and the plans of the latest-point, trip-page and device-range queries are printed with
// the partitions they opened (EXPLAIN ANALYZE: a partition the Append never reached says "never executed").
import { loadavg } from 'node:os';
import { sql } from 'kysely';
import {
  benchApp,
  captureStatements,
  interleavedP99Of,
  keptDatabase,
  ratiosOf,
  reportScans,
  sequentialScans,
  writeResult,
} from './lib.js';

const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SIZES = [10_000, ...(process.env.GPS_POINTS ?? '10000000').split(',').map(Number)];
const REPEAT = Number(process.env.BENCH_REPEAT ?? 200);
const DEVICES = 100;
const BATCH = 500_000;
// Points are stored in whole seconds (POST /v1/gps takes Unix seconds); the newest is at this time.
const NEWEST = 1_800_000_000;

/**
 * The points, into a new database, without their indexes while they go in (made again from their definitions
 * after) and without the trip-count trigger (the trips' counts are set once, last).
 */
async function fill(db, size) {
  // Monthly partitions for every point (the migration made them from this month on).
  await sql`select gps_points_extend_back(to_timestamp(${NEWEST - size / 2})), gps_points_extend(to_timestamp(${NEWEST}))`.execute(
    db,
  );
  await sql`insert into devices (name) select 'bench device ' || i from generate_series(1, ${DEVICES}) i`.execute(db);
  await sql`insert into trips (name, status, gps_logging_enabled, device_id)
    select 'bench trip ' || substr(d.name, 14), 'completed', true, d.id from devices d where d.name like 'bench device %'`.execute(
    db,
  );
  const indexes = (
    await sql`select indexname, indexdef from pg_indexes where tablename = 'gps_points' and indexname <> 'gps_points_pkey'`.execute(
      db,
    )
  ).rows;
  for (const { indexname } of indexes) await sql`drop index ${sql.id(indexname)}`.execute(db);
  await sql`alter table gps_points drop constraint gps_points_pkey`.execute(db);
  for (let start = 1; start <= size; start += BATCH) {
    const end = Math.min(start + BATCH - 1, size);
    await db.transaction().execute(async (trx) => {
      await sql`set local session_replication_role = replica`.execute(trx);
      await sql`
        insert into gps_points (device_id, trip_id, latitude, longitude, altitude, heading, "timestamp", speed_kmh, speed_mps, speed_mph, speed_knots, hdop)
        select t.ids[1 + i % ${DEVICES}], t.trips[1 + i % ${DEVICES}], 54 + (i % 1000) / 10000.0, 10 + (i % 997) / 10000.0, 2, i % 360,
               to_timestamp(${NEWEST} - i / 2), 18.52, 5.14, 11.51, 10, 0.9
        from generate_series(${start}::int, ${end}::int) i,
             (select array_agg(device_id order by name) ids, array_agg(id order by name) trips from trips where name like 'bench trip %') t`.execute(
        trx,
      );
    });
    process.stdout.write(`\r  ${end.toLocaleString('en')} points`);
  }
  process.stdout.write('\n  indexes\n');
  await sql`alter table gps_points add constraint gps_points_pkey primary key (id, "timestamp")`.execute(db);
  // A partitioned table's index reads "ON ONLY" (the parent alone); made again on every partition.
  for (const { indexdef } of indexes) await sql.raw(indexdef.replace(' ON ONLY ', ' ON ')).execute(db);
  await sql`vacuum analyze gps_points`.execute(db);
  // Last, so that a load cut short is seen as unfilled and made again.
  await sql`update trips set gps_point_count = (select count(*) from gps_points where trip_id = trips.id) where name like 'bench trip %'`.execute(
    db,
  );
}

const databaseOf = (size) =>
  keptDatabase(ADMIN_URL, `waygate_bench_gps_${size}`, {
    filled: async (db) =>
      Number(
        (await sql`select coalesce(sum(gps_point_count), 0) as n from trips where name like 'bench trip %'`.execute(db))
          .rows[0].n,
      ) === size,
    fill: (db) => {
      console.log(`loading ${size.toLocaleString('en')} points`);
      return fill(db, size);
    },
  });

/** The page of 10 that is `share` of the way into a list of `rows`. */
const pageAt = (rows, share) => Math.max(1, Math.floor((rows / 10) * share));

/** The next link of a numbered page, fetched once; and how long that numbered page took (OFFSET grows with it). */
async function nextLinkOf(app, url) {
  const began = performance.now();
  const response = await app.get(url);
  const ms = performance.now() - began;
  if (response.statusCode !== 200) throw new Error(`${url}: ${response.statusCode} ${response.body}`);
  return { next: response.json()._links.next.replace(/^https?:\/\/[^/]+/, ''), ms: +ms.toFixed(1) };
}

/** A size's database and app, and its queries; cursors taken from the service's own next links. */
async function prepare(size) {
  const { config, database, url } = await databaseOf(size);
  const captured = captureStatements(database.db, 'gps_points');
  const app = await benchApp(config, database);
  const { id: trip, device_id: device } = (
    await sql`select id, device_id from trips where name = 'bench trip 42'`.execute(database.db)
  ).rows[0];
  const tripSize = size / DEVICES;
  // Cursors in the middle and near the end of each list.
  const deep = {
    'gps mid': await nextLinkOf(app, `/v1/gps?page=${pageAt(size, 0.5)}&limit=10`),
    'gps 99%': await nextLinkOf(app, `/v1/gps?page=${pageAt(size, 0.99)}&limit=10`),
    'trip mid': await nextLinkOf(app, `/v1/trips/${trip}/gps?page=${pageAt(tripSize, 0.5)}&limit=10`),
    'trip 99%': await nextLinkOf(app, `/v1/trips/${trip}/gps?page=${pageAt(tripSize, 0.99)}&limit=10`),
  };
  const queries = {
    'gps page 1': '/v1/gps',
    'gps page 1, limit 100': '/v1/gps?limit=100',
    'gps page 50': '/v1/gps?page=50',
    'gps next of page 1': (await nextLinkOf(app, '/v1/gps')).next,
    'gps cursor mid': deep['gps mid'].next,
    'gps cursor 99%': deep['gps 99%'].next,
    'trip page 1': `/v1/trips/${trip}/gps`,
    'trip page 50': `/v1/trips/${trip}/gps?page=50`,
    'trip cursor mid': deep['trip mid'].next,
    'trip cursor 99%': deep['trip 99%'].next,
    // A device's points of one hour, in the middle of the range (about 72 points), as a file.
    'device range, an hour': `/v1/gps/export?device_id=${device}&format=geojson&from=${hourAt(size)}&to=${hourAt(size, 3600)}`,
  };
  return { size, database, url, captured, app, trip, device, deep, queries };
}

/** What a measured response says: its p99, and the total the list reported (or the file's feature count). */
function resultOf({ p99_ms, last }) {
  const body = last.json();
  return body.pagination
    ? { p99_ms, total: body.pagination.total, estimated: last.headers['x-total-count-estimated'] === 'true' }
    : { p99_ms, total: body.features.length, estimated: false };
}

/** The plans of one size's statements (sequential scans, partitions opened), printed with its p99s; closes it. */
async function finish({ size, database, url, captured, app, trip, device, deep, queries }, results) {
  captured.capturing = true;
  for (const query of Object.values(queries)) await app.get(query);
  const scans = await sequentialScans(url, captured.statements, 'gps_points');
  const plans = await partitionPlans(database.db, trip, device, size);
  await app.close();
  await database.close();
  const numbered = Object.fromEntries(
    Object.entries(deep).map(([name, { ms }]) => [`numbered page at ${name}, once`, ms]),
  );
  console.log(`\n${size.toLocaleString('en')} points (a trip: ${(size / DEVICES).toLocaleString('en')})`);
  console.table(results);
  console.table(numbered);
  reportScans(scans, 'gps_points');
  for (const [name, plan] of Object.entries(plans))
    console.log(`\n${name}: ${plan.opened} of ${plan.partitions} partitions opened\n${plan.text}`);
  return { results, numbered_once_ms: numbered, sequential_scans: scans, plans };
}

/** The middle of the points' time range, plus `seconds`, as ISO text. */
const hourAt = (size, seconds = 0) => new Date((NEWEST - size / 4 + seconds) * 1000).toISOString();

/**
 * EXPLAIN ANALYZE of the reads that must touch only the months they need: how many partitions each plan lists,
 * and how many it opened (the rest say "never executed": an ordered Append stopped before them, or pruning).
 */
async function partitionPlans(db, trip, device, size) {
  const columns = sql`id, device_id, trip_id, latitude, longitude, "timestamp"`;
  const from = new Date(hourAt(size));
  const to = new Date(hourAt(size, 3600));
  const reads = {
    'latest point overall': sql`select ${columns} from gps_points order by "timestamp" desc limit 1`,
    'latest point of a device': sql`select ${columns} from gps_points where device_id = ${device} order by "timestamp" desc limit 1`,
    'trip page 1': sql`select ${columns} from gps_points where trip_id = ${trip} order by "timestamp", id limit 11`,
    'device range, an hour': sql`select ${columns} from gps_points where device_id = ${device} and "timestamp" >= ${from} and "timestamp" <= ${to} order by "timestamp", id limit 1000`,
  };
  const plans = {};
  for (const [name, query] of Object.entries(reads)) {
    const { rows } = await sql`explain (analyze, buffers, costs off, timing off) ${query}`.execute(db);
    const text = rows.map((row) => row['QUERY PLAN']).join('\n');
    // A scan of a partition names it with its alias ("on gps_points_y2027m01 gps_points_4"); a bitmap's index
    // scan names only the index, so each partition counts once.
    const scans = text.split('\n').filter((line) => / on gps_points_\w+ gps_points/.test(line));
    const partitions = scans.length;
    const skipped = scans.filter((line) => line.includes('(never executed)')).length;
    plans[name] = { partitions, opened: partitions - skipped, text };
  }
  return plans;
}

const loadAtStart = loadavg();
const prepared = {};
for (const size of SIZES) prepared[size] = await prepare(size);
const results = Object.fromEntries(SIZES.map((size) => [size, {}]));
for (const name of Object.keys(prepared[SIZES[0]].queries)) {
  const requests = Object.fromEntries(
    SIZES.map((size) => [size, () => prepared[size].app.get(prepared[size].queries[name])]),
  );
  const measured = await interleavedP99Of(name, requests, REPEAT);
  for (const size of SIZES) results[size][name] = resultOf(measured[size]);
}
const load = { start: loadAtStart, end: loadavg() };
const summary = {};
for (const size of SIZES) summary[size] = await finish(prepared[size], results[size]);
const ratios = ratiosOf(summary, SIZES, 1.5);
console.log(
  `load average (1, 5, 15 min) at the start ${load.start.map((n) => n.toFixed(2)).join(' ')}, at the end ${load.end.map((n) => n.toFixed(2)).join(' ')}`,
);
writeResult('gps-scale', { sizes: SIZES, repeat: REPEAT, load, summary, ratios });
