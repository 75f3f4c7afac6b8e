// Start-up time of the built service: from spawning the process to the first 200 of GET /v1/health.
//   npm run bench:startup                 (STARTUP_RUNS=5 of each kind)
// cold: a fresh DATA_DIR each run (the embedded database is created and migrated first);
// warm: the same DATA_DIR again, started as `node dist/main.js serve` and as `npm start` (npm itself and
// the build check included). Figures are medians; CPU time is read at the first healthy answer, idle RSS
// 2 s later.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, ROOT, sleep } from './lib.js';

const RUNS = Number(process.env.STARTUP_RUNS ?? 5);
const IDLE_MS = 2000;
const MAIN = join(ROOT, 'dist', 'main.js');

/** The parent's environment without anything that points the service at another database or store. */
function serviceEnv(dataDir, port) {
  const env = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^(DATABASE_URL|REDIS_URL|PORT|HOST|DATA_DIR|BOOTSTRAP_|SYSTEM_API_KEY|npm_)/.test(name)) env[name] = value;
  }
  return { ...env, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' };
}

const rssMb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;

/**
 * CPU time in ms (user + system; Linux counts ticks of 10 ms): all threads with finished children (the
 * first start's `migrate`), and the main thread alone, the start's critical path. On a shared machine the
 * wall time grows with whatever else runs; these hardly do.
 */
function cpuMs(pid) {
  const ticks = (file, count) =>
    readFileSync(file, 'utf8')
      .split(') ')[1]
      .split(' ')
      .slice(11, 11 + count)
      .reduce((sum, n) => sum + Number(n), 0);
  return { all: ticks(`/proc/${pid}/stat`, 4) * 10, main: ticks(`/proc/${pid}/task/${pid}/stat`, 2) * 10 };
}

/** One start: ms to healthy and, for a direct start on Linux, its CPU ms and idle RSS in MB. Stops the service after. */
async function start(dataDir, how) {
  const port = await freePort();
  const began = performance.now();
  const [command, args] = how === 'npm' ? ['npm', ['start', '--silent']] : [process.execPath, [MAIN, 'serve']];
  // Its own process group, so npm and the node it execs are stopped together.
  const child = spawn(command, args, {
    cwd: ROOT,
    env: serviceEnv(dataDir, port),
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise((resolve) => child.on('exit', resolve));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode}: ${stderr}`);
      const ok = await fetch(`http://127.0.0.1:${port}/v1/health`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) break;
      if (performance.now() - began > 120_000) throw new Error('the service was not healthy within 120 s');
      await sleep(5);
    }
    const ms = performance.now() - began;
    if (how !== 'node' || process.platform !== 'linux') return { ms };
    const cpu = cpuMs(child.pid);
    await sleep(IDLE_MS);
    return { ms, cpu, rss: rssMb(child.pid) };
  } finally {
    if (child.exitCode === null) {
      process.kill(-child.pid, 'SIGTERM');
      await exited;
    }
  }
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

const root = mkdtempSync(join(tmpdir(), 'waygate-bench-startup-'));
const results = { cold: [], warm: [], warmNpm: [] };
try {
  let dataDir;
  for (let i = 0; i < RUNS; i++) {
    dataDir = join(root, `cold-${i}`);
    mkdirSync(dataDir);
    results.cold.push(await start(dataDir, 'node'));
  }
  for (let i = 0; i < RUNS; i++) {
    results.warm.push(await start(dataDir, 'node'));
    results.warmNpm.push(await start(dataDir, 'npm'));
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}

const summary = {
  date: new Date().toISOString().slice(0, 10),
  node: process.version,
  runs: RUNS,
  ...Object.fromEntries(
    Object.entries(results).map(([kind, runs]) => [
      kind,
      {
        medianMs: Math.round(median(runs.map((r) => r.ms))),
        runsMs: runs.map((r) => Math.round(r.ms)),
        ...(runs[0].rss === undefined
          ? {}
          : {
              medianCpuMs: median(runs.map((r) => r.cpu.all)),
              medianMainThreadCpuMs: median(runs.map((r) => r.cpu.main)),
              idleRssMb: Math.round(median(runs.map((r) => r.rss))),
            }),
      },
    ]),
  ),
};
for (const [label, kind] of [
  ['cold (fresh DATA_DIR)', 'cold'],
  ['warm, node dist/main.js serve', 'warm'],
  ['warm, npm start', 'warmNpm'],
]) {
  const { medianMs, runsMs, medianCpuMs, medianMainThreadCpuMs, idleRssMb } = summary[kind];
  const extra = idleRssMb
    ? `  CPU ${medianCpuMs} ms (main thread ${medianMainThreadCpuMs})  idle RSS ${idleRssMb} MB`
    : '';
  console.log(`${label.padEnd(32)} median ${String(medianMs).padStart(5)} ms  (${runsMs.join(', ')})${extra}`);
}
mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
writeFileSync(join(ROOT, 'bench', 'results', 'startup.json'), `${JSON.stringify(summary, null, 2)}\n`);
