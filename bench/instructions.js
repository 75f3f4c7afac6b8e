#!/usr/bin/env node
// Counts the CPU instructions per request of the service and of the bare Fastify baseline with
// valgrind's callgrind. Requests per second on a shared 2-core machine spread by ±0.1 in ratio from
// round to round; an instruction count repeats to within about 2% whatever else the machine does, so
// this is the measure to judge a change to a hot path by. It leaves out the kernel (socket reads and
// writes, about the same for both sides) and V8's background threads: under valgrind the optimising
// compiler keeps recompiling long after a native process would have settled.
//
// Each side runs in its own process under callgrind, takes WARMUP requests with instrumentation off
// (faster, and the JIT settles), then MEASURED requests counted. Needs valgrind (with
// callgrind_control and callgrind_annotate); takes about a minute per process.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { BASELINE, freePort, ROOT, sleep, waitUntilReady } from './lib.js';
import { scenarios } from './scenarios.js';
import { serviceEnv } from './service-env.js';

// 20,000 used to be enough; as the service grew, V8 still had inline caches to settle after it (the counts
// rose by half with no change on the hot path, and fell back with a longer warm-up).
const WARMUP = Number(process.env.BENCH_WARMUP ?? 80_000);
const MEASURED = Number(process.env.BENCH_MEASURED ?? 5_000);
// The cached reads by default: the rest are bound by the database, where instructions say little.
const ONLY = process.env.BENCH_ONLY;
const selected = scenarios.filter((s) => (ONLY ? s.name.includes(ONLY) : s.cachedRead));

if (spawnSync('valgrind', ['--version'], { stdio: 'ignore' }).status !== 0) {
  console.error('valgrind is not installed (Debian: apt-get install valgrind)');
  process.exit(1);
}

const work = mkdtempSync(join(tmpdir(), 'waygate-instructions-'));
const dataDir = join(work, 'data');
try {
  // Creating the embedded database under valgrind would take minutes: done natively first.
  const migrate = spawnSync(process.execPath, [join(ROOT, 'dist', 'main.js'), 'migrate'], {
    env: { ...process.env, DATA_DIR: dataDir },
    stdio: 'ignore',
  });
  if (migrate.status !== 0) throw new Error('waygate migrate failed');
  const baseline = await count('baseline', BASELINE.args, {}, BASELINE.readyPath, async () => BASELINE.request);
  console.log(`baseline (GET /hello): ${baseline.toLocaleString('en')} instructions per request\n`);
  const results = [];
  for (const scenario of selected) {
    const env = { ...serviceEnv, DATA_DIR: dataDir, HOST: '127.0.0.1' };
    /** Instructions per request of the scenario's request, as `prepare` sets it up. */
    const countOf = (prepare) =>
      count('service', [join(ROOT, 'dist', 'main.js'), 'serve'], env, '/v1/health', async (url) => ({
        ...scenario.request,
        ...(prepare ? await prepare(url, { dataDir }) : {}),
      }));
    const service = await countOf(scenario.prepare);
    const ratio = Math.round((baseline / service) * 100) / 100;
    // A comparison (see scenarios.js): the other caller's count of the same request, and the ratio of the two.
    const versus = scenario.versus && (await countOf(scenario.versus.prepare));
    results.push({
      scenario: scenario.name,
      instructions_per_request: service,
      ratio,
      ...(versus ? { versus: { label: scenario.versus.label, instructions_per_request: versus } } : {}),
    });
    console.log(
      `${scenario.name.padEnd(34)} ${service.toLocaleString('en').padStart(9)} instructions per request  | ratio to baseline ${ratio.toFixed(2)}` +
        (versus
          ? `  | ${scenario.versus.label} ${versus.toLocaleString('en')}, this caller / ${scenario.versus.label} ${(service / versus).toFixed(3)}`
          : ''),
    );
  }
  console.log(
    `\n(main thread, user space; ${WARMUP} requests of warm-up, ${MEASURED} counted; node ${process.version})`,
  );
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
  writeFileSync(
    join(ROOT, 'bench', 'results', 'instructions.json'),
    JSON.stringify(
      {
        date: new Date().toISOString(),
        node: process.version,
        warmup: WARMUP,
        measured: MEASURED,
        baseline_instructions_per_request: baseline,
        results,
      },
      null,
      2,
    ),
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}

/** Starts `args` under callgrind, warms it up, counts MEASURED requests and returns instructions per request. */
async function count(name, args, env, readyPath, prepare) {
  const port = await freePort();
  const out = join(work, `${name}-${port}`);
  const childEnv = { ...process.env, ...env, PORT: String(port) };
  const child = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      '--smc-check=all-non-file',
      '--instr-atstart=no',
      `--callgrind-out-file=${out}.%p`,
      process.execPath,
      ...args,
    ],
    { env: childEnv, stdio: ['ignore', 'ignore', 'ignore'] },
  );
  try {
    const url = `http://127.0.0.1:${port}`;
    await waitUntilReady(name, child, url + readyPath, 300);
    const request = await prepare(url);
    await load(url, request, WARMUP);
    callgrind(['--instr=on', String(child.pid)], childEnv);
    await sleep(1000);
    await load(url, request, MEASURED);
    callgrind(['--dump', String(child.pid)], childEnv);
    const dump = await dumpFile(`${name}-${port}.`);
    const total = Number(/^totals: (\d+)/m.exec(readFileSync(dump, 'utf8'))[1]);
    return Math.round((total - backgroundThreads(dump)) / MEASURED);
  } finally {
    child.kill('SIGKILL');
  }
}

/** The first dump of a process: callgrind writes it when it next looks at its commands. */
async function dumpFile(prefix) {
  for (let i = 0; i < 300; i++) {
    const file = readdirSync(work).find((f) => f.startsWith(prefix) && f.endsWith('.1'));
    // Written in one go, ending with the totals line.
    if (file && /^totals: /m.test(readFileSync(join(work, file), 'utf8'))) return join(work, file);
    await sleep(100);
  }
  throw new Error(`no callgrind dump ${prefix}*.1 after 30 s`);
}

/** Instructions of V8's worker threads (compiler, GC helpers): callgrind_annotate's inclusive cost. */
function backgroundThreads(dump) {
  const annotated = spawnSync('callgrind_annotate', ['--inclusive=yes', dump], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  }).stdout;
  const line = annotated.split('\n').find((l) => l.includes('PlatformWorkerThread'));
  return line ? Number(line.trim().split(/\s+/)[0].replaceAll(',', '')) : 0;
}

/** With the child's environment: valgrind names its command pipe after USER and HOST (the listen address here). */
function callgrind(args, env) {
  const result = spawnSync('callgrind_control', args, { encoding: 'utf8', env });
  if (result.status !== 0 || /error|failed/i.test(result.stderr))
    throw new Error(`callgrind_control ${args.join(' ')}: ${result.stderr}`);
}

async function load(url, request, amount) {
  const result = await autocannon({ url, connections: 10, amount, requests: [request] });
  if (result.non2xx || result.errors) throw new Error(`${result.non2xx} non-2xx answers and ${result.errors} errors`);
}
