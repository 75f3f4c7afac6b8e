#!/usr/bin/env node
// Starts the built service and a bare Fastify server on loopback, runs each
// scenario against both, and reports throughput and p99 as ratios to the
// baseline measured in the same run, plus the service's idle and peak RSS.
// Baseline and service take turns in BENCH_ROUNDS short rounds and each figure
// is the median over the rounds: the machine's speed drifts over minutes, and
// alternating keeps both sides of a ratio in the same conditions. A scenario with `versus` (two callers of
// one request, see scenarios.js) runs both callers in each round, in turns, and prints and stores their ratios:
// requests per second, and the p50 of single requests (BENCH_SINGLE_REQUESTS of each per round, in µs).
//
// With two or more CPUs and taskset (util-linux), the load generator (this
// process) runs on CPU 0 and the servers on CPU 1: otherwise the scheduler
// moves them onto the same core at random and runs differ by a factor of two.
// BENCH_PIN=0 turns that off.
//
// BENCH_DATABASE_URL (a PostgreSQL server's admin URL) runs the service on a fresh database created in
// that server and dropped afterwards; BENCH_REDIS_URL adds Redis under a fresh REDIS_PREFIX, whose keys
// are deleted afterwards. Without them: the embedded database and the in-process store.
import { randomBytes } from 'node:crypto';
import { spawn, spawnSync } from 'node:child_process';
import { Agent, request as httpRequest } from 'node:http';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import {
  apiCall,
  BASELINE,
  deleteRedisPrefix,
  freePort,
  freshDatabase,
  median,
  ROOT,
  sleep,
  waitUntilReady,
} from './lib.js';
import { gpsIngestRates } from './gps-ingest.js';
import { BENCH_ADMIN } from './service-env.js';
import { scenarios } from './scenarios.js';
import { serviceEnv } from './service-env.js';

const DURATION = Number(process.env.BENCH_DURATION ?? 5); // seconds per round and side
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);
const ONLY = process.env.BENCH_ONLY; // substring of a scenario name
const SINGLE_REQUESTS = Number(process.env.BENCH_SINGLE_REQUESTS ?? 2000); // per side and round of a comparison
const PINNED = process.env.BENCH_PIN !== '0' && availableParallelism() >= 2 && pin(process.pid, 0);

const dataDir = mkdtempSync(join(tmpdir(), 'waygate-bench-'));
const children = [];
const cleanups = [];

try {
  const backendEnv = await externalBackends(cleanups);
  const backends = backendEnv.DATABASE_URL ? `PostgreSQL${backendEnv.REDIS_URL ? ' + Redis' : ''}` : 'embedded PGlite';
  const baseline = await start('baseline', BASELINE.args, {}, BASELINE.readyPath);
  const service = await start(
    'service',
    [join(ROOT, 'dist', 'main.js'), 'serve'],
    {
      ...serviceEnv,
      ...backendEnv,
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      ...(process.env.BENCH_ENV ? JSON.parse(process.env.BENCH_ENV) : {}),
    },
    '/v1/health',
  );
  await sleep(1000);
  const idleRssMb = rssMb(service.child.pid, 'VmRSS');
  console.log(`service idle RSS: ${idleRssMb} MB (database: ${backends})\n`);

  const results = [];
  for (const scenario of scenarios.filter((s) => !ONLY || s.name.includes(ONLY))) {
    const context = { dataDir };
    const measured = { ...scenario.request, ...(scenario.prepare ? await scenario.prepare(service.url, context) : {}) };
    const versus = scenario.versus && { ...scenario.request, ...(await scenario.versus.prepare(service.url, context)) };
    await load(baseline.url, BASELINE.request, 2); // warm-up
    await load(service.url, measured, 2);
    if (versus) await load(service.url, versus, 2);
    const rounds = [];
    for (let i = 0; i < ROUNDS; i++) {
      const turns = { base: await load(baseline.url, BASELINE.request, DURATION) };
      // The two callers of a comparison take turns at going first, round by round.
      if (versus && i % 2) turns.versus = await load(service.url, versus, DURATION);
      turns.measured = await load(service.url, measured, DURATION);
      if (versus && !turns.versus) turns.versus = await load(service.url, versus, DURATION);
      if (versus) [turns.single, turns.versusSingle] = await singleClientP50s(service.url, [measured, versus]);
      rounds.push(turns);
    }
    const row = {
      scenario: scenario.name,
      req_per_sec: Math.round(median(rounds.map((r) => r.measured.requests.average))),
      p50_ms: median(rounds.map((r) => r.measured.latency.p50)),
      p99_ms: median(rounds.map((r) => r.measured.latency.p99)),
      baseline_req_per_sec: Math.round(median(rounds.map((r) => r.base.requests.average))),
      baseline_p99_ms: median(rounds.map((r) => r.base.latency.p99)),
      throughput_ratio: round(median(rounds.map((r) => r.measured.requests.average / r.base.requests.average))),
      p99_ratio: round(median(rounds.map((r) => r.measured.latency.p99 / Math.max(r.base.latency.p99, 1)))),
      round_ratios: rounds.map((r) => round(r.measured.requests.average / r.base.requests.average)),
      non_2xx: rounds.reduce((sum, r) => sum + r.measured.non2xx + (r.versus?.non2xx ?? 0), 0),
      errors: rounds.reduce((sum, r) => sum + r.measured.errors + (r.versus?.errors ?? 0), 0),
      ...(versus ? { versus: comparison(scenario.versus.label, rounds) } : {}),
    };
    results.push(row);
    console.log(
      `${row.scenario.padEnd(34)} ${String(row.req_per_sec).padStart(7)} req/s  p99 ${String(row.p99_ms).padStart(4)} ms` +
        `  | baseline ${String(row.baseline_req_per_sec).padStart(7)} req/s  p99 ${String(row.baseline_p99_ms).padStart(4)} ms` +
        `  | ratio ${row.throughput_ratio.toFixed(2)} (rounds ${row.round_ratios.join(', ')})  p99 x${row.p99_ratio.toFixed(2)}` +
        (row.non_2xx || row.errors ? `  (non-2xx ${row.non_2xx}, errors ${row.errors})` : ''),
    );
    if (row.versus) printComparison(row);
  }
  // BENCH_ONLY=ingest runs only this part. Unpinned (see gps-ingest.js): its baselines are the database's own
  // rates, which use both CPUs, so the service side gets both too. Nothing runs after it.
  const ingestPinned = PINNED && process.env.BENCH_INGEST_PIN === '1';
  if (PINNED && !ingestPinned)
    for (const pid of [process.pid, service.child.pid]) pin(pid, `0-${availableParallelism() - 1}`);
  const gpsIngest =
    !ONLY || ONLY === 'ingest'
      ? await gpsIngestRates({
          pinned: ingestPinned,
          url: service.url,
          admin: await apiCall(service.url, 'POST', '/v1/auth/login', {
            identifier: BENCH_ADMIN.username,
            password: BENCH_ADMIN.password,
          }).then((login) => ({ token: login.session_token, userId: login.user_id })),
          databaseUrl: backendEnv.DATABASE_URL,
          rounds: ROUNDS,
          connections: CONNECTIONS,
          seconds: DURATION,
        })
      : undefined;
  const peakRssMb = rssMb(service.child.pid, 'VmHWM');
  console.log(`\nservice RSS: idle ${idleRssMb} MB, peak ${peakRssMb} MB`);
  console.log(
    `(${ROUNDS} rounds of ${DURATION} s per side, medians; ${CONNECTIONS} connections, node ${process.version}, ${PINNED ? 'load generator on CPU 0, servers on CPU 1' : 'not pinned to CPUs'}, ${backends})`,
  );
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
  writeFileSync(
    join(ROOT, 'bench', 'results', 'latest.json'),
    JSON.stringify(
      {
        date: new Date().toISOString(),
        backends,
        rounds: ROUNDS,
        duration_secs: DURATION,
        connections: CONNECTIONS,
        pinned: PINNED,
        idle_rss_mb: idleRssMb,
        peak_rss_mb: peakRssMb,
        results,
        gps_ingest: gpsIngest,
      },
      null,
      2,
    ),
  );
} finally {
  for (const child of children) child.kill('SIGTERM');
  await sleep(500);
  rmSync(dataDir, { recursive: true, force: true });
  for (const cleanup of cleanups.reverse()) await cleanup().catch((err) => console.error('cleanup:', err.message));
}

/** A fresh database (and Redis prefix) for this run when BENCH_DATABASE_URL (BENCH_REDIS_URL) is set. */
async function externalBackends(onCleanup) {
  const env = {};
  const adminUrl = process.env.BENCH_DATABASE_URL;
  const redisUrl = process.env.BENCH_REDIS_URL;
  if (adminUrl) {
    const database = await freshDatabase(adminUrl, `waygate_bench_${process.pid}_${Date.now()}`);
    onCleanup.push(database.drop);
    env.DATABASE_URL = database.url;
  }
  if (redisUrl) {
    const prefix = `waygate-bench-${randomBytes(4).toString('hex')}:`;
    onCleanup.push(() => deleteRedisPrefix(redisUrl, prefix));
    Object.assign(env, { REDIS_URL: redisUrl, REDIS_PREFIX: prefix });
  }
  return env;
}

async function start(name, args, env, readyPath) {
  const port = await freePort();
  const command = PINNED ? ['taskset', ['-c', '1', process.execPath, ...args]] : [process.execPath, args];
  const child = spawn(...command, {
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(child);
  const url = `http://127.0.0.1:${port}`;
  await waitUntilReady(name, child, url + readyPath, 30);
  return { child, url };
}

/** Pins every thread of a process to one CPU; false when taskset is not there. */
function pin(pid, cpu) {
  return spawnSync('taskset', ['-a', '-cp', String(cpu), String(pid)], { stdio: 'ignore' }).status === 0;
}

/**
 * The two sides of a comparison (the scenario's caller against `label`'s), from the same rounds: requests per
 * second, p50 and p99 under load (autocannon counts whole milliseconds, too coarse for a ratio of fast reads), and
 * the p50 of single requests in µs; the ratios of the scenario's side to the other's, per round and their median
 * (requests per second above 1: the scenario's side is faster; p50 above 1: slower).
 */
function comparison(label, rounds) {
  const perSecond = rounds.map((r) => round(r.measured.requests.average / r.versus.requests.average));
  const singleP50 = rounds.map((r) => Math.round((r.single / r.versusSingle) * 1000) / 1000);
  return {
    label,
    req_per_sec: Math.round(median(rounds.map((r) => r.versus.requests.average))),
    p50_ms: median(rounds.map((r) => r.versus.latency.p50)),
    p99_ms: median(rounds.map((r) => r.versus.latency.p99)),
    single_p50_us: Math.round(median(rounds.map((r) => r.versusSingle))),
    scenario_single_p50_us: Math.round(median(rounds.map((r) => r.single))),
    req_per_sec_ratio: median(perSecond),
    req_per_sec_round_ratios: perSecond,
    single_p50_ratio: median(singleP50),
    single_p50_round_ratios: singleP50,
  };
}

function printComparison(row) {
  const v = row.versus;
  console.log(
    `  vs ${v.label}: ${v.req_per_sec} req/s, p50 ${v.p50_ms} ms, p99 ${v.p99_ms} ms, one client p50 ${v.single_p50_us} µs` +
      ` (this caller: ${row.req_per_sec} req/s, p50 ${row.p50_ms} ms, one client p50 ${v.scenario_single_p50_us} µs)` +
      `\n  this caller / ${v.label}: req/s ${v.req_per_sec_ratio.toFixed(2)} (rounds ${v.req_per_sec_round_ratios.join(', ')}),` +
      ` one client p50 ${v.single_p50_ratio.toFixed(3)} (rounds ${v.single_p50_round_ratios.join(', ')})`,
  );
}

/**
 * The p50 in µs of single requests, one keep-alive connection per request given, the requests taking turns one
 * by one (which goes first alternating), SINGLE_REQUESTS of each after 100 unmeasured: the latency of a request
 * to an otherwise idle service, in finer steps than autocannon's whole milliseconds.
 */
async function singleClientP50s(url, requests) {
  const agents = requests.map(() => new Agent({ keepAlive: true, maxSockets: 1 }));
  const times = requests.map(() => []);
  for (let i = 0; i < SINGLE_REQUESTS + 100; i++) {
    const order = i % 2 ? [...requests.keys()].reverse() : [...requests.keys()];
    for (const side of order) {
      const took = await timedRequest(url, requests[side], agents[side]);
      if (i >= 100) times[side].push(took);
    }
  }
  for (const agent of agents) agent.destroy();
  return times.map(median);
}

/** One request's time in µs, from sending it to the end of its answer (which must be 200). */
function timedRequest(url, { method, path, headers }, agent) {
  return new Promise((resolve, reject) => {
    const began = process.hrtime.bigint();
    httpRequest(url + path, { method, headers, agent }, (response) => {
      if (response.statusCode !== 200) reject(new Error(`${method} ${path}: ${response.statusCode}`));
      response.resume();
      response.on('end', () => resolve(Number(process.hrtime.bigint() - began) / 1000));
    })
      .on('error', reject)
      .end();
  });
}

function load(url, request, duration) {
  return autocannon({ url, connections: CONNECTIONS, duration, requests: [request] });
}

function rssMb(pid, field) {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(field));
  return Math.round(Number(line.split(/\s+/)[1]) / 1024);
}

function round(n) {
  return Math.round(n * 100) / 100;
}
