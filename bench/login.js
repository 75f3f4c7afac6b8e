// Sign-in against the hash rate: `npm run bench:login`.
//
// First measures the raw argon2id rate of this machine (the service's parameters, one verification in
// flight per CPU, in a process of its own), then signs the bootstrap admin in over HTTP with 8
// connections, and reports the ratio. Then times wrong passwords for a user that exists and for one
// that does not, one at a time, and compares the medians (they must not tell the two apart). Neither
// side is pinned: hashing should use every core. Results go to bench/results/login.json.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { hash, verify } from '@node-rs/argon2';
import autocannon from 'autocannon';
import { freePort, ROOT, waitUntilReady } from './lib.js';
import { BENCH_ADMIN, serviceEnv } from './service-env.js';

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
// Concurrent sign-ins of one identifier count as attempts until they finish, and more than 10 lock it:
// the admin signs in by username and by email in turn, 4 of each in flight (enough for 4 hashing threads).
const CONNECTIONS = 8;
// The sign-in throttle locks an identifier after 10 failures and an address after 50 (in 15 minutes):
// the admin is named by username and by email, 9 failures each, and 18 unknown names make 36 in all.
const TIMING_SAMPLES = 18;
// The service's parameters (src/platform/auth/passwords.ts).
const OPTIONS = { algorithm: 2 /* Argon2id */, memoryCost: 19_456, timeCost: 2, parallelism: 1 };

async function rawRate() {
  const stored = await hash('bench-password-1', OPTIONS);
  const until = Date.now() + DURATION * 1000;
  let count = 0;
  await Promise.all(
    Array.from({ length: availableParallelism() }, async () => {
      while (Date.now() < until) {
        await verify(stored, 'bench-password-1');
        count++;
      }
    }),
  );
  return count / DURATION;
}

async function startService() {
  const dataDir = mkdtempSync(join(tmpdir(), 'waygate-bench-login-'));
  const port = await freePort();
  const child = spawn(process.execPath, [join(ROOT, 'dist', 'main.js'), 'serve'], {
    env: { ...process.env, ...serviceEnv, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  await waitUntilReady('service', child, `${url}/v1/health`, 120);
  return {
    url,
    stop: () => {
      child.kill('SIGTERM');
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const loginBody = (identifier, password) => JSON.stringify({ identifier, password });

async function timeLogin(url, identifier, password) {
  const started = process.hrtime.bigint();
  const response = await fetch(`${url}/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: loginBody(identifier, password),
  });
  await response.arrayBuffer();
  return { ms: Number(process.hrtime.bigint() - started) / 1e6, status: response.status };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const raw = await rawRate();
console.log(`raw argon2id verifications: ${raw.toFixed(0)}/s (${availableParallelism()} in flight)`);
const service = await startService();
try {
  let next = 0;
  const run = await autocannon({
    url: service.url,
    connections: CONNECTIONS,
    duration: DURATION,
    requests: [
      {
        method: 'POST',
        path: '/v1/auth/login',
        headers: { 'content-type': 'application/json' },
        setupRequest: (request) => ({
          ...request,
          body: loginBody(next++ % 2 ? BENCH_ADMIN.username : BENCH_ADMIN.email, BENCH_ADMIN.password),
        }),
      },
    ],
  });
  const non2xx = run.non2xx;
  const rate = run.requests.average;
  console.log(
    `POST /v1/auth/login: ${rate.toFixed(0)}/s, p99 ${run.latency.p99} ms, ${non2xx} not 2xx | ratio to the raw rate ${(rate / raw).toFixed(2)}`,
  );

  // Wrong passwords, alternating a user that exists and one that does not.
  const known = [];
  const unknown = [];
  for (let i = 0; i < TIMING_SAMPLES; i++) {
    known.push(await timeLogin(service.url, i % 2 ? BENCH_ADMIN.username : BENCH_ADMIN.email, `wrong-${i}`));
    unknown.push(await timeLogin(service.url, `nobody_${i}`, `wrong-${i}`));
  }
  const statuses = new Set([...known, ...unknown].map((r) => r.status));
  const knownMs = median(known.map((r) => r.ms));
  const unknownMs = median(unknown.map((r) => r.ms));
  console.log(
    `wrong password, median: user exists ${knownMs.toFixed(1)} ms, no such user ${unknownMs.toFixed(1)} ms (statuses ${[...statuses].join(', ')})`,
  );

  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
  writeFileSync(
    join(ROOT, 'bench', 'results', 'login.json'),
    JSON.stringify(
      {
        date: new Date().toISOString(),
        raw_per_sec: raw,
        login_per_sec: rate,
        ratio: rate / raw,
        p99_ms: run.latency.p99,
        non2xx,
        wrong_password_median_ms: { known: knownMs, unknown: unknownMs },
      },
      null,
      2,
    ),
  );
} finally {
  service.stop();
}
