// GPS ingest rates of the running service beside its own database's (issue 31), for `npm run bench`:
// - POST /v1/gps/batch (10,000 points a request) against PostgreSQL's COPY of the same rows into gps_points;
// - POST /v1/gps/import of a CSV file (the same batch store) against the same COPY rate;
// - POST /v1/gps, one point per request, against single-row INSERTs over as many connections.
// Each side runs BENCH_ROUNDS times, alternating; figures are medians. Without a PostgreSQL URL (the
// embedded database) only the service's rates are measured: nothing else can reach PGlite.
//
// Unpinned (run.js frees the service and this process from their CPUs first; BENCH_INGEST_PIN=1 keeps them):
// the baselines are PostgreSQL's own rates, and PostgreSQL uses both CPUs for them (single-row INSERTs from
// this process pinned to CPU 0 kept both CPUs about 90% busy). With the service pinned to CPU 1, the
// PostgreSQL backends it wakes run beside it on that CPU (the kernel wakes a task on its waker's CPU) and
// CPU 0 stayed about 36% busy: the service's side got one and a third cores against the baseline's two.
// Unpinned, both sides have the same machine, as on a server that pins nothing.
import { randomUUID } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import autocannon from 'autocannon';
import { apiCall, median, sleep } from './lib.js';

const BATCH = 10_000;
const BATCHES = Number(process.env.BENCH_GPS_BATCHES ?? 10);
/** Requests (or COPY statements) in flight at once. */
const PARALLEL = 2;
const POINT = {
  altitude: 12.5,
  heading: 90,
  speed_kmh: 36,
  speed_mps: 10,
  speed_mph: 22.37,
  speed_knots: 19.44,
  hdop: 0.9,
};
/** Every point of a run has its own time, so no side ever meets a duplicate. */
let nextSecond = 1_600_000_000;

function points(count) {
  return Array.from({ length: count }, (_, i) => ({
    ...POINT,
    latitude: 50 + (i % 1000) / 1e4,
    longitude: 8 + i / 1e6,
    timestamp: nextSecond++,
  }));
}

/** `count` jobs, at most PARALLEL at a time. */
async function inParallel(count, job) {
  let next = 0;
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      while (next < count) await job(next++);
    }),
  );
}

/** A device with its own key (gps:write) of the admin, made through the API. */
async function deviceWithKey(url, admin, name) {
  const key = await apiCall(url, 'POST', '/v1/api-keys', { name, scopes: ['gps:write'] }, admin.token);
  const device = await apiCall(url, 'POST', '/v1/devices', { name, api_key_id: key.id }, admin.token);
  return { key: key.key, deviceId: device.data.id, userId: admin.userId };
}

/** Points per second of POST /v1/gps/batch: BATCHES requests of 10,000 points, PARALLEL at a time. */
async function batchRate(url, key) {
  const bodies = Array.from({ length: BATCHES }, () => JSON.stringify(points(BATCH)));
  const began = performance.now();
  await inParallel(BATCHES, async (i) => {
    const result = await apiCall(url, 'POST', '/v1/gps/batch', bodies[i], key);
    if (result.stored !== BATCH) throw new Error(`batch: ${JSON.stringify(result).slice(0, 300)}`);
  });
  return (BATCHES * BATCH) / ((performance.now() - began) / 1000);
}

/** Points per second of an import of one CSV file of BATCHES × 10,000 points, from the request to `done`. */
async function importRate(url, key) {
  const lines = ['timestamp,latitude,longitude,altitude,heading,speed_mps,hdop'];
  for (const p of points(BATCHES * BATCH))
    lines.push(
      `${new Date(p.timestamp * 1000).toISOString()},${p.latitude},${p.longitude},${p.altitude},${p.heading},${p.speed_mps},${p.hdop}`,
    );
  const file = lines.join('\n');
  const began = performance.now();
  const started = await apiCall(url, 'POST', '/v1/gps/import?format=csv', file, key, 'text/csv');
  for (;;) {
    const { data } = await apiCall(url, 'GET', `/v1/gps/imports/${started.data.id}`, undefined, key);
    if (data.status === 'failed') throw new Error(`import: ${JSON.stringify(data.error)}`);
    if (data.status === 'done') return data.imported / ((performance.now() - began) / 1000);
    await sleep(20);
  }
}

/** A row of gps_points as COPY's text format has it, in the columns the service sets (sent_by: the key's user). */
const COPY_COLUMNS =
  'id, device_id, latitude, longitude, altitude, heading, "timestamp", speed_kmh, speed_mps, speed_mph, speed_knots, hdop, sent_by';
const copyLine = ({ deviceId, userId }, p) =>
  `${randomUUID()}\t${deviceId}\t${p.latitude}\t${p.longitude}\t${p.altitude}\t${p.heading}\t${new Date(p.timestamp * 1000).toISOString()}\t${p.speed_kmh}\t${p.speed_mps}\t${p.speed_mph}\t${p.speed_knots}\t${p.hdop}\t${userId}\n`;

/** Rows per second of COPY into gps_points: the same rows as batchRate, one COPY (one transaction) per 10,000. */
async function copyRate(pool, owner) {
  const { from: copyFrom } = (await import('pg-copy-streams')).default;
  const texts = Array.from({ length: BATCHES }, () =>
    points(BATCH)
      .map((p) => copyLine(owner, p))
      .join(''),
  );
  const began = performance.now();
  await inParallel(BATCHES, async (i) => {
    const client = await pool.connect();
    try {
      await pipeline(Readable.from([texts[i]]), client.query(copyFrom(`copy gps_points (${COPY_COLUMNS}) from stdin`)));
    } finally {
      client.release();
    }
  });
  return (BATCHES * BATCH) / ((performance.now() - began) / 1000);
}

/** Single-row INSERTs per second over `connections` connections for `seconds`, each committed on its own. */
async function insertRate(pool, { deviceId, userId }, connections, seconds) {
  let inserted = 0;
  const until = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < until) {
        const p = points(1)[0];
        await pool.query(
          `insert into gps_points (${COPY_COLUMNS}) values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
          [
            randomUUID(),
            deviceId,
            p.latitude,
            p.longitude,
            p.altitude,
            p.heading,
            new Date(p.timestamp * 1000),
            p.speed_kmh,
            p.speed_mps,
            p.speed_mph,
            p.speed_knots,
            p.hdop,
            userId,
          ],
        );
        inserted++;
      }
    }),
  );
  return inserted / seconds;
}

/** POST /v1/gps per second over `connections` connections for `seconds`, each request with the next of the keys. */
async function singlePointRate(url, keys, connections, seconds) {
  let next = 0;
  const result = await autocannon({
    url,
    connections,
    duration: seconds,
    requests: [
      {
        method: 'POST',
        path: '/v1/gps',
        setupRequest: (request) => ({
          ...request,
          headers: { 'content-type': 'application/json', authorization: `Bearer ${keys[next++ % keys.length]}` },
          body: JSON.stringify(points(1)[0]),
        }),
      },
    ],
  });
  if (result.non2xx || result.errors)
    throw new Error(`POST /v1/gps: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return result.requests.average;
}

const round = (n) => Math.round(n);
const ratio = (a, b) => (b ? Math.round((a / b) * 100) / 100 : null);

/**
 * Runs the three comparisons against the service at `url` (`databaseUrl`: its PostgreSQL, else embedded) as
 * `admin` ({ token, userId }), and prints and returns their medians.
 */
export async function gpsIngestRates({ url, admin, databaseUrl, rounds, connections, seconds, pinned }) {
  const pg = databaseUrl ? (await import('pg')).default : undefined;
  const pool = pg && new pg.Pool({ connectionString: databaseUrl, max: connections });
  try {
    const batchDevice = await deviceWithKey(url, admin, 'bench batch');
    const importDevice = await deviceWithKey(url, admin, 'bench import');
    const rawDevice = await deviceWithKey(url, admin, 'bench raw');
    const singleKeys = [];
    for (let i = 0; i < 50; i++) singleKeys.push((await deviceWithKey(url, admin, `bench single ${i}`)).key);
    // Both sides of the single-point comparison warm up first, as the HTTP scenarios do (V8 compiles the
    // route's path on its first thousands of requests; the first round was always the slowest by a quarter).
    await singlePointRate(url, singleKeys, connections, 2);
    if (pool) await insertRate(pool, rawDevice, connections, 2);
    const rows = [];
    for (let i = 0; i < rounds; i++) {
      const batch = await batchRate(url, batchDevice.key);
      const copy = pool ? await copyRate(pool, rawDevice) : null;
      const imported = await importRate(url, importDevice.key);
      // Whichever side runs first after the import meets PostgreSQL still writing its 100,000 rows out (and
      // analysing the table): the two sides take turns at going first.
      const single = () => singlePointRate(url, singleKeys, connections, seconds);
      const insert = async () => (pool ? await insertRate(pool, rawDevice, connections, seconds) : null);
      let singleRate;
      let insertRows;
      if (i % 2 === 0) {
        singleRate = await single();
        insertRows = await insert();
      } else {
        insertRows = await insert();
        singleRate = await single();
      }
      rows.push({ batch, copy, import: imported, single: singleRate, insert: insertRows });
    }
    const of = (name) => (rows[0][name] === null ? null : round(median(rows.map((row) => row[name]))));
    const summary = {
      pinned,
      batch_points_per_sec: of('batch'),
      copy_rows_per_sec: of('copy'),
      batch_to_copy: pool ? median(rows.map((row) => ratio(row.batch, row.copy))) : null,
      import_points_per_sec: of('import'),
      import_to_copy: pool ? median(rows.map((row) => ratio(row.import, row.copy))) : null,
      single_points_per_sec: of('single'),
      insert_rows_per_sec: of('insert'),
      single_to_insert: pool ? median(rows.map((row) => ratio(row.single, row.insert))) : null,
      rounds: rows.map((row) =>
        Object.fromEntries(Object.entries(row).map(([k, v]) => [k, v === null ? null : round(v)])),
      ),
    };
    console.log(
      `\nGPS ingest (${BATCHES} × ${BATCH.toLocaleString('en')} points a round, ${PARALLEL} at a time; single points over ${connections} connections; ${pinned ? 'service pinned to CPU 1' : 'not pinned'})\n` +
        `  POST /v1/gps/batch ${summary.batch_points_per_sec} points/s` +
        (pool
          ? `  | COPY ${summary.copy_rows_per_sec} rows/s  | ratio ${summary.batch_to_copy} (goal >= 0.5, and >= 50,000/s)`
          : '  (goal >= 20,000/s embedded)') +
        '\n' +
        `  POST /v1/gps/import ${summary.import_points_per_sec} points/s` +
        (pool ? `  | ratio to COPY ${summary.import_to_copy} (goal >= 50,000/s)` : '') +
        '\n' +
        `  POST /v1/gps ${summary.single_points_per_sec} points/s` +
        (pool
          ? `  | single-row INSERT ${summary.insert_rows_per_sec} rows/s  | ratio ${summary.single_to_insert} (goal >= 0.8)`
          : ''),
    );
    return summary;
  } finally {
    await pool?.end();
  }
}
