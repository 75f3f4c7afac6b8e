// Helpers shared by the bench scripts.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const ROOT = join(import.meta.dirname, '..');
export const BASELINE = { args: [join(ROOT, 'bench', 'baseline.js')], readyPath: '/hello', request: { method: 'GET', path: '/hello' } };

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
 * leaves nothing behind) and filled by `fill(db)`. Resolves to its config, database and URL.
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
    if ((await admin.query('select 1 from pg_database where datname = $1', [name])).rowCount === 0) await admin.query(`create database ${name}`);
  };
  await create(Boolean(process.env.BENCH_FRESH));
  const config = loadConfig({ ...serviceEnv, DATABASE_URL: url, DATA_DIR: mkdtempSync(join(tmpdir(), `${name}-`)) });
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
    if (state.capturing && compiled.sql.startsWith('select') && compiled.sql.includes(`from "${table}"`)) state.statements.push(compiled);
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
    if (!plan.split('\n').some((line) => line.includes(`Seq Scan on ${table}`) && !line.includes('cost=0.00..0.00'))) continue;
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
  const login = await app.inject({ method: 'POST', url: '/v1/auth/login', payload: { identifier: BENCH_ADMIN.username, password: BENCH_ADMIN.password } });
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
  console.log(`${unbounded.length} unbounded sequential scans of ${table}; ${scans.length - unbounded.length} bounded by a limit`);
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

/** p99 at the large size over p99 at the small one, per query; printed against `goal` and returned. */
export function ratiosOf(summary, [small, large], goal) {
  const ratios = Object.fromEntries(Object.keys(summary[small].results).map((name) => [name, +(summary[large].results[name].p99_ms / summary[small].results[name].p99_ms).toFixed(2)]));
  console.log(`\np99 at ${large.toLocaleString('en')} / p99 at ${small.toLocaleString('en')} (goal <= ${goal})`);
  console.table(ratios);
  return ratios;
}

/** Writes `bench/results/<name>.json`. */
export function writeResult(name, result) {
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
  writeFileSync(join(ROOT, 'bench', 'results', `${name}.json`), `${JSON.stringify({ ...result, node: process.version, at: new Date().toISOString() }, null, 2)}\n`);
}
