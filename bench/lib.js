// Helpers shared by the bench scripts.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const ROOT = join(import.meta.dirname, '..');
export const BASELINE = {
  args: [join(ROOT, 'bench', 'baseline.js')],
  readyPath: '/hello',
  request: { method: 'GET', path: '/hello' },
};

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/** Resolves once `url` answers 2xx; rejects when the child exits first or after `seconds`. */
export async function waitUntilReady(name, child, url, seconds) {
  for (let i = 0; i < seconds * 10; i++) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`${name} did not start within ${seconds} s`);
}

/** A call of the service's API with a bearer token: its JSON answer, or an error naming the status. A string body is sent as it is. */
export async function apiCall(baseUrl, method, path, body, token, contentType = 'application/json') {
  const response = await fetch(baseUrl + path, {
    method,
    headers: {
      ...(body === undefined ? {} : { 'content-type': contentType }),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: body === undefined || typeof body === 'string' ? body : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${(await response.text()).slice(0, 500)}`);
  return response.json();
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A new, empty database in the PostgreSQL server of `adminUrl`: its URL, and how to drop it. */
export async function freshDatabase(adminUrl, name) {
  const pg = (await import('pg')).default;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  return {
    url: Object.assign(new URL(adminUrl), { pathname: `/${name}` }).toString(),
    drop: async () => {
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}

/** Deletes every key under `prefix` in the Redis at `url`; resolves to how many there were. */
export async function deleteRedisPrefix(url, prefix) {
  const { Redis } = await import('ioredis');
  const redis = new Redis(url);
  let deleted = 0;
  for (let cursor = '0'; ;) {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    if (keys.length) deleted += await redis.del(...keys);
    if ((cursor = next) === '0') break;
  }
  await redis.quit();
  return deleted;
}

// The scale benches (audit-scale.js, gps-scale.js): the service over a kept PostgreSQL database per size.

/**
 * The migrated database `name` in the PostgreSQL server of `adminUrl`, kept between runs (BENCH_FRESH=1
 * drops it first). When `filled(db)` says it is not filled, it is made again from nothing (a load cut short
 * leaves nothing behind) and filled by `fill(db)`. Resolves to its config, database and URL. Its DATA_DIR is kept
 * too ($TMPDIR/<name>): the secret key generated there on the first run is the one the database's secrets are
 * sealed with, and a rerun with another is refused (BENCH_FRESH=1 when that directory was lost).
 */
export async function keptDatabase(adminUrl, name, { filled, fill }) {
  const pg = (await import('pg')).default;
  const { loadConfig } = await import('../dist/config.js');
  const { openMigratedDatabase } = await import('../dist/server.js');
  const { serviceEnv } = await import('./service-env.js');
  const url = Object.assign(new URL(adminUrl), { pathname: `/${name}` }).toString();
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  const create = async (drop) => {
    if (drop) await admin.query(`drop database if exists ${name} with (force)`);
    if ((await admin.query('select 1 from pg_database where datname = $1', [name])).rowCount === 0)
      await admin.query(`create database ${name}`);
  };
  await create(Boolean(process.env.BENCH_FRESH));
  const dataDir = join(tmpdir(), name);
  mkdirSync(dataDir, { recursive: true });
  const config = loadConfig({ ...serviceEnv, DATABASE_URL: url, DATA_DIR: dataDir });
  let { database } = await openMigratedDatabase(config);
  if (!(await filled(database.db))) {
    await database.close();
    await create(true);
    ({ database } = await openMigratedDatabase(config));
    await fill(database.db);
  }
  await admin.end();
  return { config, database, url };
}

/** The service's SELECTs reading `table` while `capturing` is set, to EXPLAIN them afterwards. */
export function captureStatements(db, table) {
  const state = { capturing: false, statements: [] };
  const executor = db.getExecutor();
  const execute = executor.executeQuery.bind(executor);
  executor.executeQuery = async (compiled, queryId) => {
    if (state.capturing && compiled.sql.startsWith('select') && compiled.sql.includes(`from "${table}"`))
      state.statements.push(compiled);
    return execute(compiled, queryId);
  };
  return state;
}

/**
 * The statements whose plans scan `table` sequentially, with their plans. A scan with no filter under a
 * Limit stops after that many rows (the capped count of a small table), so it is marked `bounded`.
 */
export async function sequentialScans(url, statements, table) {
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const scans = [];
  for (const statement of statements) {
    const { rows } = await client.query(`explain ${statement.sql}`, statement.parameters);
    const plan = rows.map((row) => row['QUERY PLAN']).join('\n');
    // An empty partition (cost 0.00..0.00: no pages) is scanned rather than probed, at no cost; not counted.
    if (!plan.split('\n').some((line) => line.includes(`Seq Scan on ${table}`) && !line.includes('cost=0.00..0.00')))
      continue;
    const bounded = new RegExp(`Limit[\\s\\S]*Seq Scan on ${table}`).test(plan) && !plan.includes('Filter:');
    scans.push({ sql: statement.sql.slice(0, 200), bounded, plan });
  }
  await client.end();
  return scans;
}

export const p99 = (times) => [...times].sort((a, b) => a - b)[Math.ceil(times.length * 0.99) - 1];

/** The built app over `database` (in-process store), and a session of the bench admin. */
export async function benchApp(config, database) {
  const { buildApp } = await import('../dist/app.js');
  const { openKeyValueStore } = await import('../dist/platform/kv/index.js');
  const { BENCH_ADMIN } = await import('./service-env.js');
  const kv = await openKeyValueStore({ kind: 'memory' });
  const app = await buildApp(config, { database, kv }, { logger: false });
  const login = await app.inject({
    method: 'POST',
    url: '/v1/auth/login',
    payload: { identifier: BENCH_ADMIN.username, password: BENCH_ADMIN.password },
  });
  const headers = { authorization: `Bearer ${login.json().session_token}` };
  return {
    get: (url) => app.inject({ method: 'GET', url, headers }),
    close: async () => {
      await app.close();
      await kv.close();
    },
  };
}

/** Says which sequential scans there were (see `sequentialScans`): how many unbounded, how many bounded. */
export function reportScans(scans, table) {
  const unbounded = scans.filter((scan) => !scan.bounded);
  if (unbounded.length) console.log(unbounded);
  console.log(
    `${unbounded.length} unbounded sequential scans of ${table}; ${scans.length - unbounded.length} bounded by a limit`,
  );
}

/** p99 in ms of `repeat` runs of `request` after 20 unmeasured ones, and the last response (which must be 200). */
export async function p99Of(name, request, repeat) {
  for (let i = 0; i < 20; i++) await request();
  const times = [];
  let last;
  for (let i = 0; i < repeat; i++) {
    const began = performance.now();
    last = await request();
    times.push(performance.now() - began);
  }
  if (last.statusCode !== 200) throw new Error(`${name}: ${last.statusCode} ${last.body}`);
  return { p99_ms: +p99(times).toFixed(2), last };
}

/**
 * p99 of one request at each size, the sizes taking turns request by request (after a warm-up of each), so
 * that a shared machine's load, which comes and goes, weighs on every size alike and their ratio holds.
 * `requests` maps a size to its request; answers p99_ms and the last response per size.
 */
export async function interleavedP99Of(name, requests, repeat) {
  const sizes = Object.keys(requests);
  for (let i = 0; i < 20; i++) for (const size of sizes) await requests[size]();
  const times = Object.fromEntries(sizes.map((size) => [size, []]));
  const last = {};
  for (let i = 0; i < repeat; i++) {
    for (const size of sizes) {
      const began = performance.now();
      last[size] = await requests[size]();
      times[size].push(performance.now() - began);
    }
  }
  for (const size of sizes)
    if (last[size].statusCode !== 200)
      throw new Error(`${name} at ${size}: ${last[size].statusCode} ${last[size].body}`);
  return Object.fromEntries(sizes.map((size) => [size, { p99_ms: +p99(times[size]).toFixed(2), last: last[size] }]));
}

/** p99 at each large size over p99 at the small one, per query; printed against `goal` and returned. */
export function ratiosOf(summary, [small, ...larges], goal) {
  const byLarge = {};
  for (const large of larges) {
    const ratios = Object.fromEntries(
      Object.keys(summary[small].results).map((name) => [
        name,
        +(summary[large].results[name].p99_ms / summary[small].results[name].p99_ms).toFixed(2),
      ]),
    );
    console.log(`\np99 at ${large.toLocaleString('en')} / p99 at ${small.toLocaleString('en')} (goal <= ${goal})`);
    console.table(ratios);
    byLarge[large] = ratios;
  }
  return larges.length === 1 ? byLarge[larges[0]] : byLarge;
}

/** Writes `bench/results/<name>.json`. */
export function writeResult(name, result) {
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
  writeFileSync(
    join(ROOT, 'bench', 'results', `${name}.json`),
    `${JSON.stringify({ ...result, node: process.version, at: new Date().toISOString() }, null, 2)}\n`,
  );
}

// The in-process benches of streamed downloads (export.js, gps-files-export.js).

/**
 * The built service in this process over a migrated database (the embedded one in a temporary directory;
 * DATABASE_URL for PostgreSQL), listening on loopback, with the bench admin signed in: `call` goes through
 * the API as the admin, `close` stops everything.
 */
export async function listeningService(name) {
  const { buildApp } = await import('../dist/app.js');
  const { loadConfig } = await import('../dist/config.js');
  const { openKeyValueStore } = await import('../dist/platform/kv/index.js');
  const { openMigratedDatabase } = await import('../dist/server.js');
  const { BENCH_ADMIN, serviceEnv } = await import('./service-env.js');
  const config = loadConfig({
    ...serviceEnv,
    ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
    DATA_DIR: mkdtempSync(join(tmpdir(), `waygate-bench-${name}-`)),
  });
  const { database } = await openMigratedDatabase(config);
  const kv = await openKeyValueStore({ kind: 'memory' });
  const app = await buildApp(config, { database, kv }, { logger: false });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const inject = async (method, url, token, payload) => {
    const response = await app.inject({
      method,
      url,
      headers: token ? { authorization: `Bearer ${token}` } : {},
      payload,
    });
    if (response.statusCode >= 300) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`);
    return response.json();
  };
  const signedIn = await inject('POST', '/v1/auth/login', null, {
    identifier: BENCH_ADMIN.username,
    password: BENCH_ADMIN.password,
  });
  return {
    database,
    port: app.server.address().port,
    admin: { token: signedIn.session_token, userId: signedIn.user_id },
    call: (method, url, payload) => inject(method, url, signedIn.session_token, payload),
    close: async () => {
      await app.close();
      await kv.close();
      await database.close();
    },
  };
}

/** Writes `count` points of a device straight into gps_points, a second apart from 2026-01-01, 2,000 a statement; `extra`: more columns. */
export async function fillPoints(db, deviceId, count, extra = {}) {
  const { sql } = await import('kysely');
  const start = Date.parse('2026-01-01T00:00:00Z');
  for (let i = 0; i < count; i += 2000) {
    const rows = [];
    for (let j = i; j < Math.min(i + 2000, count); j++) {
      rows.push({
        device_id: deviceId,
        latitude: 52 + j / 1e6,
        longitude: 13 + j / 1e6,
        timestamp: new Date(start + j * 1000),
        speed_kmh: 10,
        speed_mps: 2.78,
        speed_mph: 6.2,
        speed_knots: 5.4,
        ...extra,
      });
    }
    await db.insertInto('gps_points').values(rows).execute();
  }
  // Statistics, as autovacuum would gather them on a server: without any (PGlite runs no autovacuum), the keyset
  // reads of an export pick a bitmap scan of the device's points after the cursor and sort them, a scan per page
  // that makes a million-point export quadratic (GPX took 1,033 s instead of a few tens of seconds).
  await sql`analyze gps_points`.execute(db);
}

/**
 * GETs `path` off the listening service with a real HTTP client that throws the body away: status, bytes,
 * seconds and the peak RSS growth in MB (sampled every 5 ms, against the RSS right before, after a GC when
 * node runs with --expose-gc).
 */
export async function measuredDownload(port, path, token) {
  const { get } = await import('node:http');
  global.gc?.();
  await sleep(200);
  const before = process.memoryUsage.rss();
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 5);
  const began = performance.now();
  try {
    const result = await new Promise((resolve, reject) => {
      get({ host: '127.0.0.1', port, path, headers: { authorization: `Bearer ${token}` } }, (response) => {
        let bytes = 0;
        response.on('data', (chunk) => (bytes += chunk.length));
        response.on('end', () => resolve({ status: response.statusCode, bytes }));
        response.on('error', reject);
      }).on('error', reject);
    });
    peak = Math.max(peak, process.memoryUsage.rss());
    return {
      ...result,
      seconds: (performance.now() - began) / 1000,
      rssBeforeMb: before / 2 ** 20,
      rssGrowthMb: (peak - before) / 2 ** 20,
    };
  } finally {
    clearInterval(sampler);
  }
}
