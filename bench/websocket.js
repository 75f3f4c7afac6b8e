// WebSocket fan-out at 10,000 subscribers: delivery latency of new GPS points and memory per idle connection.
//   npm run bench:websocket            one node (embedded database), then two nodes on PostgreSQL + Redis
//   BENCH_ONLY=single | cluster        one of the two parts
//   WS_SUBSCRIBERS=10000  WS_POINTS=50  WS_INTERVAL_MS=200  WS_CLIENT_PROCESSES=4
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres   (the cluster gets a fresh database in it, dropped after)
//   REDIS_URL=redis://127.0.0.1:6379    (the cluster uses a fresh REDIS_PREFIX, whose keys are deleted after)
//   BENCH_PIN=1                        servers on CPU 1, clients on CPU 0 (taskset). Off by default: pinned, the two
//                                      nodes would share one core, and single-node runs spread more (p99 186-282 ms
//                                      against 105-131 ms unpinned, 2-core machine, 2026-11-25)
//   BENCH_WS_PROFILE=1                 write a CPU profile of each server to bench/results/ws-profile/
//   BENCH_ENV='{"LOG_LEVEL":"info"}'   extra service environment (as in bench/run.js)
// Every subscriber authenticates with `Authorization: Bearer <API key with gps:read>` (one key, created as the
// bootstrap admin), waits for Welcome, subscribes to `gps` and waits for Subscribed. The subscribers live in
// WS_CLIENT_PROCESSES child processes (this file with --client). Points are POSTed as the admin on a schedule
// (WS_INTERVAL_MS apart, not waiting for answers); each carries its sequence number as `altitude`. The latency
// of a (subscriber, point) pair runs from just before the POST is written to the socket to the client's
// 'message' event for the GpsPoint frame, both read from CLOCK_MONOTONIC (process.hrtime), which every
// process on the machine shares. It includes the insert, the fan-out and the client's own event-loop delay.
// Memory is measured on a separate start of the single node, with the inspector on loopback only to force a full
// GC (HeapProfiler.collectGarbage) before each reading: VmRSS after a warm-up and 2 s of quiet, then with all
// connections open (authenticated, not subscribed) after 2 s of quiet; the difference over the number of
// connections (V8's used heap likewise). Latency runs on a start without the inspector, which cost ~10% of CPU.
// Goals: p99 < 50 ms, < 20 KB per idle connection. Results: bench/results/websocket.json.
import { fork, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { deleteRedisPrefix, freePort, freshDatabase, ROOT, sleep, waitUntilReady } from './lib.js';
import { BENCH_ADMIN, serviceEnv } from './service-env.js';

const now = () => Number(process.hrtime.bigint()) / 1e6; // CLOCK_MONOTONIC, in ms: comparable across processes

if (process.argv[2] === '--client') {
  const { default: WebSocket } = await import('ws');
  runClient(WebSocket);
} else {
  await main();
}

// ---------------------------------------------------------------------------------------------------------
// Coordinator

async function main() {
  const SUBSCRIBERS = Number(process.env.WS_SUBSCRIBERS ?? 10_000);
  const POINTS = Number(process.env.WS_POINTS ?? 50);
  const INTERVAL_MS = Number(process.env.WS_INTERVAL_MS ?? 200);
  const CLIENT_PROCESSES = Number(process.env.WS_CLIENT_PROCESSES ?? 4);
  const ONLY = process.env.BENCH_ONLY;
  const DATABASE_ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const PROFILE = process.env.BENCH_WS_PROFILE === '1';
  const CPUS = availableParallelism(); // before pinning, which narrows it
  const PINNED = process.env.BENCH_PIN === '1' && CPUS >= 2 && pin(process.pid, 0);
  const GOALS = { p99_ms: 50, kb_per_connection: 20 };

  const fdLimit = openFileLimit();
  // A server holds every connection of its node; a client process its share (plus a margin for the rest).
  const serverFds = SUBSCRIBERS + 1000;
  const clientFds = Math.ceil(SUBSCRIBERS / CLIENT_PROCESSES) + 1000;
  if (Math.max(serverFds, clientFds) > fdLimit.hard) {
    throw new Error(
      `the open-file limit (hard ${fdLimit.hard}) is below the ${serverFds} descriptors the server needs; raise it (ulimit -Hn)`,
    );
  }
  const needsUlimit = (fds) => fds > fdLimit.soft;

  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  const cleanups = [];
  const servers = [];
  const serverEvents = []; // crashes, log lines at warn and above
  const git = (args) => spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' }).stdout?.trim();
  const results = {
    date: new Date().toISOString(),
    commit: git(['rev-parse', '--short', 'HEAD']),
    dirty: Boolean(git(['status', '--porcelain', 'src'])),
    node: process.version,
    cpus: CPUS,
    pinned: PINNED,
    subscribers: SUBSCRIBERS,
    points: POINTS,
    interval_ms: INTERVAL_MS,
    client_processes: CLIENT_PROCESSES,
    goals: GOALS,
  };

  const clients = [];
  // Whatever way this process ends (an uncaught error skips the finally below), no server or client outlives it.
  process.on('exit', () => {
    for (const child of [...servers, ...clients].map((c) => c.child))
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  try {
    for (let i = 0; i < CLIENT_PROCESSES; i++) clients.push(startClient(i, needsUlimit(clientFds) ? clientFds : 0));

    if (!ONLY || ONLY === 'single') {
      const dataDir = mkdtempSync(join(tmpdir(), 'waygate-bench-ws-'));
      cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
      const probed = await startServer('node', { DATA_DIR: dataDir }, { inspect: true });
      results.memory = await measureMemory(probed);
      await stopServer(probed);
      // The same data directory, started again without the inspector.
      const node = await startServer('node', { DATA_DIR: dataDir });
      results.single = await measureLatency([node], 'one node, embedded database (PGlite), in-process pub/sub');
      await stopServer(node);
    }

    if (!ONLY || ONLY === 'cluster') {
      const dbName = `waygate_bench_ws_${process.pid}_${Date.now()}`;
      const prefix = `waygate-bench-ws-${randomBytes(4).toString('hex')}:`;
      const database = await freshDatabase(DATABASE_ADMIN_URL, dbName);
      cleanups.push(database.drop);
      cleanups.push(() => deleteRedisPrefix(REDIS_URL, prefix));
      const databaseUrl = database.url;
      const shared = {
        DATABASE_URL: databaseUrl,
        REDIS_URL,
        REDIS_PREFIX: prefix,
        SECRET_KEY: randomBytes(24).toString('hex'),
      };
      const nodes = [];
      for (const name of ['node A', 'node B']) {
        const dataDir = mkdtempSync(join(tmpdir(), 'waygate-bench-ws-'));
        cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
        // One after the other: the first applies the migrations and creates the admin.
        nodes.push(await startServer(name, { ...shared, DATA_DIR: dataDir }));
      }
      results.cluster = await measureLatency(nodes, 'two nodes, PostgreSQL + Redis pub/sub, points posted to node A');
      for (const node of nodes) await stopServer(node);
    }
  } finally {
    for (const client of clients) client.child.kill('SIGTERM');
    for (const server of servers) if (server.child.exitCode === null) server.child.kill('SIGTERM');
    await sleep(500);
    for (const cleanup of cleanups.reverse())
      await Promise.resolve(cleanup()).catch((err) => console.error('cleanup:', err.message));
    agent.destroy();
  }

  results.server_events = serverEvents;
  printSummary(results);
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
  writeFileSync(join(ROOT, 'bench', 'results', 'websocket.json'), `${JSON.stringify(results, null, 2)}\n`);

  // ---- the measurements ----

  /** The admin's session and a gps:read key (created on the first node), and how to reach every node. */
  async function sessionOn(nodes) {
    const [entry] = nodes;
    const token = (
      await call(entry.url, 'POST', '/v1/auth/login', {
        identifier: BENCH_ADMIN.username,
        password: BENCH_ADMIN.password,
      })
    ).session_token;
    const key = (await call(entry.url, 'POST', '/v1/api-keys', { name: 'ws bench', scopes: ['gps:read'] }, token)).key;
    return {
      entry,
      token,
      wsUrls: nodes.map((node) => node.url.replace('http:', 'ws:') + '/v1/ws'),
      headers: { authorization: `Bearer ${key}` },
    };
  }

  function perClient(message) {
    return Promise.all(clients.map((client, i) => client.ask(typeof message === 'function' ? message(i) : message)));
  }

  /** A few connections through the whole path (connect, subscribe, points), closed again, then 2 s of quiet. */
  async function warmUp(session) {
    await perClient({ cmd: 'connect', urls: session.wsUrls, headers: session.headers, count: 50 });
    await perClient({ cmd: 'subscribe' });
    await postPoints(session.entry.url, session.token, 5, 50);
    await sleep(300);
    await perClient({ cmd: 'close' });
    await sleep(2000);
  }

  /** SUBSCRIBERS connections spread over the client processes (and round-robin over the nodes), each welcomed. */
  async function connectAll(session) {
    const share = (i) => Math.floor(SUBSCRIBERS / CLIENT_PROCESSES) + (i < SUBSCRIBERS % CLIENT_PROCESSES ? 1 : 0);
    const started = performance.now();
    const connected = await perClient((i) => ({
      cmd: 'connect',
      urls: session.wsUrls,
      headers: session.headers,
      count: share(i),
    }));
    const secs = (performance.now() - started) / 1000;
    const open = sum(connected.map((c) => c.open));
    const failures = connected.flatMap((c) => c.failures);
    console.log(
      `${open.toLocaleString('en')} connections open in ${secs.toFixed(1)} s` +
        (failures.length ? `; ${failures.length} failed: ${[...new Set(failures)].slice(0, 3).join('; ')}` : ''),
    );
    return { open, failures, secs };
  }

  async function subscribeAll() {
    const subscribed = sum((await perClient({ cmd: 'subscribe' })).map((s) => s.subscribed));
    console.log(`${subscribed.toLocaleString('en')} subscribed to gps`);
    return subscribed;
  }

  /**
   * Memory per idle connection, on a node started with the inspector (to force full GCs) and used for nothing
   * else: with the inspector on, the fan-out took 5-15% more CPU, so latency is measured on another start.
   */
  async function measureMemory(node) {
    console.log('\n== memory: one node, idle connections');
    const session = await sessionOn([node]);
    await warmUp(session);
    const before = await settledMemory(node);
    const { open, failures } = await connectAll(session);
    await sleep(2000);
    const idle = await settledMemory(node);
    await subscribeAll();
    await sleep(500);
    const subscribed = await settledMemory(node);
    await perClient({ cmd: 'close' });
    const perConnection = (after, field) => +((after[field] - before[field]) / Math.max(open, 1)).toFixed(1);
    const memory = {
      connections: open,
      connect_failures: failures.length,
      rss_mb: { before: mb(before.rssKb), idle_connections: mb(idle.rssKb), subscribed: mb(subscribed.rssKb) },
      kb_per_idle_connection: perConnection(idle, 'rssKb'),
      kb_per_subscribed_connection: perConnection(subscribed, 'rssKb'),
      // The V8 heap alone (after the same forced GC): the part of the RSS growth that is JavaScript objects.
      heap_kb_per_idle_connection: perConnection(idle, 'heapUsedKb'),
    };
    console.log(
      `RSS ${memory.rss_mb.before} MB -> ${memory.rss_mb.idle_connections} MB with ${open.toLocaleString('en')} idle connections: ` +
        `${memory.kb_per_idle_connection} KB each (V8 heap ${memory.heap_kb_per_idle_connection} KB)`,
    );
    return memory;
  }

  /** Delivery latency over `nodes`: subscribers spread evenly, points posted to the first node. */
  async function measureLatency(nodes, description) {
    console.log(`\n== latency: ${description}`);
    const session = await sessionOn(nodes);
    await warmUp(session);
    // Plain RSS readings (no forced GC here): for information.
    const rssBefore = nodes.map((node) => rssKb(node.child.pid));
    const { open, failures: refused, secs: connectSecs } = await connectAll(session);
    await sleep(2000);
    const rssIdle = nodes.map((node) => rssKb(node.child.pid));
    const subscribedCount = await subscribeAll();
    await sleep(500);
    const health = await Promise.all(
      nodes.map((node) =>
        call(node.url, 'GET', '/v1/health').then(
          (h) => h.services?.websocket,
          (err) => ({ error: err.message }),
        ),
      ),
    );

    await perClient({ cmd: 'arm', points: POINTS });
    const cpuBefore = nodes.map((node) => cpuMs(node.child.pid));
    const hostBefore = hostCpuMs();
    const selfBefore = process.cpuUsage();
    const {
      sentAt,
      answeredAt,
      failures: postFailures,
    } = await postPoints(session.entry.url, session.token, POINTS, INTERVAL_MS);
    // Let the last frames arrive.
    const expected = open * POINTS;
    for (let waited = 0; waited < 10_000; waited += 100) {
      const counts = await perClient({ cmd: 'count' });
      if (sum(counts.map((c) => c.received)) >= expected) break;
      await sleep(100);
    }
    const cpuAfter = nodes.map((node) => cpuMs(node.child.pid));
    const hostAfter = hostCpuMs();
    const selfCpu = process.cpuUsage(selfBefore);
    const collected = await perClient({ cmd: 'collect' });
    await perClient({ cmd: 'close' });

    // Latencies of every (subscriber, point) pair, overall and by the node the subscriber is on.
    const all = [];
    const byNode = nodes.map(() => []);
    const perPoint = Array.from({ length: POINTS }, () => ({ first: Infinity, last: -Infinity }));
    let missing = 0;
    for (const { arrivals, nodeOf, connections } of collected) {
      for (let c = 0; c < connections; c++) {
        for (let p = 0; p < POINTS; p++) {
          const at = arrivals[p * connections + c];
          if (Number.isNaN(at) || Number.isNaN(sentAt[p])) {
            missing++;
            continue;
          }
          const latency = at - sentAt[p];
          all.push(latency);
          byNode[nodeOf[c]].push(latency);
          perPoint[p].first = Math.min(perPoint[p].first, latency);
          perPoint[p].last = Math.max(perPoint[p].last, latency);
        }
      }
    }
    const postMs = sentAt.map((at, p) => answeredAt[p] - at).filter((ms) => !Number.isNaN(ms));
    const cpuPerPoint = nodes.map((_, n) => (cpuAfter[n] - cpuBefore[n]) / POINTS);
    const deliveredPerNode = byNode.map((list) => list.length);
    const clientCpuMs = sum(collected.map((c) => c.cpuMs));
    const hostTotalMs = Math.max(hostAfter.totalMs - hostBefore.totalMs, 1);
    const run = {
      description,
      nodes: nodes.length,
      connections_open: open,
      connect_failures: refused.length,
      connect_failure_samples: [...new Set(refused)].slice(0, 5),
      connect_secs: +connectSecs.toFixed(1),
      subscribed: subscribedCount,
      deliveries_expected: expected,
      deliveries: all.length,
      missing,
      duplicates: sum(collected.map((c) => c.duplicates)),
      unexpected_closes: sum(collected.map((c) => c.unexpectedCloses)),
      close_codes: mergeCounts(collected.map((c) => c.closeCodes)),
      post_failures: postFailures,
      latency_ms: stats(all),
      latency_ms_by_node:
        nodes.length > 1 ? Object.fromEntries(nodes.map((node, n) => [node.name, stats(byNode[n])])) : undefined,
      first_delivery_ms: stats(perPoint.filter((p) => p.first !== Infinity).map((p) => p.first)),
      last_delivery_ms: stats(perPoint.filter((p) => p.last !== -Infinity).map((p) => p.last)),
      post_round_trip_ms: stats(postMs),
      server_cpu_ms_per_point: Object.fromEntries(nodes.map((node, n) => [node.name, +cpuPerPoint[n].toFixed(1)])),
      server_cpu_us_per_frame: Object.fromEntries(
        nodes.map((node, n) => [
          node.name,
          +((cpuPerPoint[n] * 1000 * POINTS) / Math.max(deliveredPerNode[n], 1)).toFixed(2),
        ]),
      ),
      client_cpu_us_per_frame: +((clientCpuMs * 1000) / Math.max(all.length, 1)).toFixed(2),
      // Whether something else shared the machine: every CPU's busy time during the points, and what this bench's own
      // processes (servers, clients, this one) used of it; the rest is PostgreSQL, Redis, the kernel and anything else.
      host_cpu: {
        window_secs: +(hostTotalMs / 1000 / CPUS).toFixed(1),
        busy_percent: Math.round((100 * (hostAfter.busyMs - hostBefore.busyMs)) / hostTotalMs),
        bench_processes_percent: Math.round(
          (100 * (sum(cpuAfter) - sum(cpuBefore) + clientCpuMs + (selfCpu.user + selfCpu.system) / 1000)) / hostTotalMs,
        ),
      },
      rss_mb: Object.fromEntries(
        nodes.map((node, n) => [
          node.name,
          { before: mb(rssBefore[n]), idle_connections: mb(rssIdle[n]), peak: mb(rssKb(node.child.pid, 'VmHWM')) },
        ]),
      ),
      // RSS growth over each node's share of the connections, without a forced GC (the goal is judged by measureMemory).
      kb_per_idle_connection_unforced: Object.fromEntries(
        nodes.map((node, n) => [node.name, +((rssIdle[n] - rssBefore[n]) / (open / nodes.length)).toFixed(1)]),
      ),
      websocket_health: Object.fromEntries(nodes.map((node, n) => [node.name, health[n]])),
    };
    const l = run.latency_ms;
    console.log(
      `delivered ${all.length.toLocaleString('en')} of ${expected.toLocaleString('en')}: p50 ${l.p50} ms, p99 ${l.p99} ms, max ${l.max} ms` +
        `; POST round trip p50 ${run.post_round_trip_ms.p50} ms; server CPU per point ${Object.values(run.server_cpu_ms_per_point).join(' / ')} ms` +
        `; CPUs ${run.host_cpu.busy_percent}% busy, ${run.host_cpu.bench_processes_percent}% by this bench`,
    );
    const others = run.host_cpu.busy_percent - run.host_cpu.bench_processes_percent;
    if (others > 20)
      console.log(
        `warning: other processes kept the CPUs ${others}% busy during the points (the database, Redis, or something else on the host): latencies are inflated`,
      );
    return run;
  }

  async function postPoints(url, token, count, intervalMs) {
    const sentAt = new Array(count).fill(NaN);
    const answeredAt = new Array(count).fill(NaN);
    const failures = [];
    const pending = [];
    const timestamp = Math.floor(Date.now() / 1000);
    const start = performance.now();
    for (let seq = 0; seq < count; seq++) {
      const due = start + seq * intervalMs;
      if (performance.now() < due) await sleep(due - performance.now());
      const body = JSON.stringify({
        latitude: 53.55 + seq / 1e4,
        longitude: 9.99,
        altitude: seq,
        heading: 180,
        timestamp: timestamp + seq,
        speed_kmh: 10,
        speed_mps: 2.78,
        speed_mph: 6.2,
        speed_knots: 5.4,
      });
      pending.push(
        send(url, 'POST', '/v1/gps', body, token, () => (sentAt[seq] = now())).then(
          ({ status, text }) => {
            answeredAt[seq] = now();
            if (status !== 201 && status !== 200) failures.push(`${status} ${text.slice(0, 200)}`);
          },
          (err) => failures.push(err.message),
        ),
      );
    }
    await Promise.all(pending);
    return { sentAt, answeredAt, failures };
  }

  async function call(url, method, path, payload, token) {
    const { status, text } = await send(
      url,
      method,
      path,
      payload === undefined ? undefined : JSON.stringify(payload),
      token,
    );
    if (status >= 300) throw new Error(`${method} ${path}: ${status} ${text}`);
    return JSON.parse(text);
  }

  function send(url, method, path, body, token, beforeWrite) {
    return new Promise((resolve, reject) => {
      const headers = {};
      if (body !== undefined)
        Object.assign(headers, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      if (token) headers.authorization = `Bearer ${token}`;
      const req = httpRequest(`${url}${path}`, { method, headers, agent }, (res) => {
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString() }));
        res.on('error', reject);
      });
      req.on('error', reject);
      beforeWrite?.();
      req.end(body);
    });
  }

  async function startServer(name, env, { inspect = false } = {}) {
    const port = await freePort();
    const nodeArgs = PROFILE
      ? [
          `--cpu-prof`,
          `--cpu-prof-dir=${join(ROOT, 'bench', 'results', 'ws-profile')}`,
          `--cpu-prof-name=${name.replace(' ', '-')}-${Date.now()}.cpuprofile`,
        ]
      : [];
    // The inspector, on loopback, only to force a full GC before each memory reading (nothing else is enabled).
    const inspectPort = inspect ? await freePort() : undefined;
    if (inspect) nodeArgs.push(`--inspect=127.0.0.1:${inspectPort}`);
    let command = [process.execPath, ...nodeArgs, join(ROOT, 'dist', 'main.js'), 'serve'];
    if (needsUlimit(serverFds)) command = ['sh', '-c', `ulimit -n ${serverFds} && exec "$0" "$@"`, ...command];
    if (PINNED) command = ['taskset', '-c', '1', ...command];
    const child = spawn(command[0], command.slice(1), {
      env: {
        ...process.env,
        ...serviceEnv,
        RATE_LIMIT_ENABLED: 'false',
        HOST: '127.0.0.1',
        PORT: String(port),
        ...env,
        ...(process.env.BENCH_ENV ? JSON.parse(process.env.BENCH_ENV) : {}),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const server = { name, child, url: `http://127.0.0.1:${port}`, inspectPort, stopping: false };
    servers.push(server);
    for (const stream of [child.stdout, child.stderr]) {
      let buffered = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk) => {
        const lines = (buffered + chunk).split('\n');
        buffered = lines.pop();
        for (const line of lines.filter(Boolean)) {
          if (
            /^(Debugger listening on|Debugger ending on|For help, see: https:\/\/nodejs.org\/en\/docs\/inspector|Debugger attached|Waiting for the debugger)/.test(
              line,
            )
          )
            continue;
          // pino lines at warn (40) and above count as problems; other output (start-up notes) is kept as is.
          // With BENCH_ENV='{"LOG_LEVEL":"info"}' request lines are left out, shutdown notes kept.
          let level = 0;
          let msg = '';
          try {
            ({ level = 0, msg = '' } = JSON.parse(line));
          } catch {}
          if (level > 0 && level < 40 && !/shutting down|stopped|signal|listening/.test(msg)) continue;
          if (serverEvents.length < 50) serverEvents.push({ node: name, level, line: line.slice(0, 500) });
          process.stderr.write(`[${name}] ${line.slice(0, 300)}\n`);
        }
      });
    }
    child.on('exit', (code, signal) => {
      if (!server.stopping) {
        serverEvents.push({ node: name, crash: { code, signal } });
        // Exit code 0 is the SIGTERM/SIGINT handler's (see src/main.ts): a signal from outside this bench.
        console.error(
          `[${name}] exited unexpectedly (${code ?? signal}${code === 0 ? ': a graceful shutdown, so SIGTERM or SIGINT from outside' : ''})`,
        );
      }
    });
    await waitUntilReady(name, child, `${server.url}/v1/health`, 60);
    return server;
  }

  /** VmRSS and V8 heap use after a full GC (through the inspector) and a short quiet. */
  async function settledMemory(server) {
    server.inspector ??= await inspectorSession(server.inspectPort);
    await server.inspector.call('HeapProfiler.collectGarbage');
    await sleep(300);
    const { usedSize } = await server.inspector.call('Runtime.getHeapUsage');
    return { rssKb: rssKb(server.child.pid), heapUsedKb: usedSize / 1024 };
  }

  async function stopServer(server) {
    server.inspector?.close();
    server.stopping = true;
    // The server leaves idle keep-alive connections the grace period (SHUTDOWN_TIMEOUT_SECS) to send one more
    // request: closing ours first saves those 10 s per node.
    agent.destroy();
    if (server.child.exitCode !== null) return;
    const exited = new Promise((resolve) => server.child.once('exit', resolve));
    server.child.kill('SIGTERM');
    await Promise.race([exited, sleep(15_000)]);
  }

  function startClient(index, fds) {
    let child;
    if (fds) {
      child = spawn(
        'sh',
        ['-c', `ulimit -n ${fds} && exec "$0" "$@"`, process.execPath, import.meta.filename, '--client'],
        {
          stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
          serialization: 'advanced',
        },
      );
    } else {
      child = fork(import.meta.filename, ['--client'], { serialization: 'advanced', execArgv: [] });
    }
    // Inherited from this process when pinned; explicit in case the shell wrapper ran first.
    if (PINNED) pin(child.pid, 0);
    const waiting = [];
    child.on('message', (message) => waiting.shift()?.resolve(message));
    child.on('exit', (code) => {
      for (const w of waiting.splice(0)) w.reject(new Error(`client ${index} exited with ${code}`));
    });
    return {
      child,
      ask(message) {
        return new Promise((resolve, reject) => {
          waiting.push({ resolve, reject });
          child.send(message, (err) => err && reject(new Error(`client ${index}: ${err.message}`)));
        });
      },
    };
  }
}

function printSummary(results) {
  const header = [
    'setup',
    'delivered',
    'p50',
    'p99',
    'max',
    'last frame p50',
    'POST p50',
    'server CPU/point',
    'p99 goal',
  ];
  const rows = [header];
  for (const run of [results.single, results.cluster].filter(Boolean)) {
    const l = run.latency_ms;
    rows.push([
      run.nodes === 1 ? '1 node (PGlite)' : '2 nodes (PG + Redis)',
      `${run.deliveries.toLocaleString('en')}/${run.deliveries_expected.toLocaleString('en')}`,
      `${l.p50} ms`,
      `${l.p99} ms`,
      `${l.max} ms`,
      `${run.last_delivery_ms.p50} ms`,
      `${run.post_round_trip_ms.p50} ms`,
      `${Object.values(run.server_cpu_ms_per_point).join(' + ')} ms`,
      l.p99 < results.goals.p99_ms ? 'met' : `missed (< ${results.goals.p99_ms} ms)`,
    ]);
  }
  const widths = header.map((_, c) => Math.max(...rows.map((row) => row[c].length)));
  console.log(
    `\n${results.subscribers.toLocaleString('en')} subscribers on gps, ${results.points} points ${results.interval_ms} ms apart, ` +
      `${results.client_processes} client processes, node ${results.node}, ${results.cpus} CPUs, ${results.pinned ? 'servers on CPU 1, clients on CPU 0' : 'not pinned'}`,
  );
  for (const [i, row] of rows.entries()) {
    console.log(row.map((cell, c) => (c < 2 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  '));
    if (i === 0) console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  }
  if (results.memory) {
    const m = results.memory;
    console.log(
      `memory per idle connection: ${m.kb_per_idle_connection} KB of RSS (V8 heap ${m.heap_kb_per_idle_connection} KB; subscribed: ${m.kb_per_subscribed_connection} KB); goal < ${results.goals.kb_per_connection} KB: ` +
        (m.kb_per_idle_connection < results.goals.kb_per_connection ? 'met' : 'missed'),
    );
  }
  for (const run of [results.single, results.cluster].filter(Boolean)) {
    const problems = [];
    if (run.connect_failures) problems.push(`${run.connect_failures} connections refused`);
    if (run.missing) problems.push(`${run.missing} deliveries missing`);
    if (run.duplicates) problems.push(`${run.duplicates} duplicate deliveries`);
    if (run.unexpected_closes)
      problems.push(`${run.unexpected_closes} connections closed by the server (${JSON.stringify(run.close_codes)})`);
    if (run.post_failures.length) problems.push(`${run.post_failures.length} POSTs failed: ${run.post_failures[0]}`);
    if (problems.length) console.log(`${run.nodes} node(s): ${problems.join('; ')}`);
  }
  const crashes = results.server_events.filter((e) => e.crash);
  if (crashes.length) console.log(`servers that exited during the run: ${JSON.stringify(crashes)}`);
  const warnings = results.server_events.filter((e) => e.level >= 40);
  console.log(
    `server warnings and errors logged: ${warnings.length}${warnings.length ? ` (first: ${warnings[0].line.slice(0, 200)})` : ''}`,
  );
}

// ---------------------------------------------------------------------------------------------------------
// Client process: holds its share of the subscribers and records when each GpsPoint frame arrives.

function runClient(WebSocket) {
  let connections = [];
  let nodeOf = new Uint8Array(0);
  let points = 0;
  let arrivals = new Float64Array(0);
  let received = 0;
  let duplicates = 0;
  let unexpectedCloses = 0;
  let closeCodes = {};
  let cpuStart = process.cpuUsage();
  let subscribedWaiters = 0;
  let onSubscribed = () => {};

  function open(url, headers, index) {
    return new Promise((resolve) => {
      const ws = new WebSocket(url, {
        headers,
        perMessageDeflate: false,
        skipUTF8Validation: true,
        handshakeTimeout: 60_000,
      });
      const connection = { ws, index, closing: false };
      let welcomed = false;
      ws.on('message', (data) => {
        const at = now();
        // GpsPoint frames are the hot path: no JSON.parse, the sequence number is the altitude.
        if (data[9] === 0x47 /* G of {"type":"GpsPoint" */) {
          const text = data.toString('latin1');
          const match = /"altitude":"?(-?\d+)/.exec(text);
          const seq = match ? Number(match[1]) : -1;
          if (seq < 0 || seq >= points) return;
          const slot = seq * connections.length + connection.index;
          if (Number.isNaN(arrivals[slot])) {
            arrivals[slot] = at;
            received++;
          } else duplicates++;
          return;
        }
        const message = JSON.parse(data.toString());
        if (message.type === 'Welcome' && !welcomed) {
          welcomed = true;
          resolve({ connection });
        } else if (message.type === 'Subscribed') {
          subscribedWaiters--;
          if (subscribedWaiters === 0) onSubscribed();
        }
      });
      ws.on('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => resolve({ failure: `HTTP ${res.statusCode} ${body.slice(0, 120)}` }));
      });
      ws.on('error', (err) => {
        if (!welcomed) resolve({ failure: err.message });
      });
      ws.on('close', (code) => {
        if (!welcomed) return resolve({ failure: `closed ${code} before Welcome` });
        if (!connection.closing) {
          unexpectedCloses++;
          closeCodes[code] = (closeCodes[code] ?? 0) + 1;
        }
      });
    });
  }

  async function connect({ urls, headers, count, concurrency = 64 }) {
    const failures = [];
    const opened = new Array(count);
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < count; i = next++) {
        const result = await open(urls[i % urls.length], headers, i);
        if (result.failure) failures.push(result.failure);
        else opened[i] = result.connection;
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
    connections = [];
    nodeOf = new Uint8Array(count);
    for (let i = 0; i < count; i++) {
      if (!opened[i]) continue;
      opened[i].index = connections.length;
      nodeOf[connections.length] = i % urls.length;
      connections.push(opened[i]);
    }
    unexpectedCloses = 0;
    closeCodes = {};
    return { open: connections.length, failures };
  }

  process.on('message', async (message) => {
    switch (message.cmd) {
      case 'connect':
        return process.send(await connect(message));
      case 'subscribe': {
        const live = connections.filter((c) => c.ws.readyState === WebSocket.OPEN);
        if (live.length === 0) return process.send({ subscribed: 0 });
        subscribedWaiters = live.length;
        const done = new Promise((resolve) => (onSubscribed = resolve));
        for (const { ws } of live) ws.send('{"type":"Subscribe","channel":"gps"}');
        await Promise.race([done, new Promise((resolve) => setTimeout(resolve, 30_000))]);
        return process.send({ subscribed: live.length - subscribedWaiters });
      }
      case 'arm':
        points = message.points;
        arrivals = new Float64Array(points * connections.length).fill(NaN);
        received = 0;
        duplicates = 0;
        cpuStart = process.cpuUsage();
        return process.send({ ok: true });
      case 'count':
        return process.send({ received });
      case 'collect': {
        const cpu = process.cpuUsage(cpuStart);
        return process.send({
          arrivals,
          nodeOf: nodeOf.subarray(0, connections.length),
          connections: connections.length,
          duplicates,
          unexpectedCloses,
          closeCodes,
          cpuMs: (cpu.user + cpu.system) / 1000,
        });
      }
      case 'close':
        for (const connection of connections) {
          connection.closing = true;
          connection.ws.terminate();
        }
        connections = [];
        points = 0;
        return process.send({ ok: true });
    }
  });
  process.on('disconnect', () => process.exit(0));
}

// ---------------------------------------------------------------------------------------------------------
// Helpers

/** A Chrome DevTools Protocol session with a process started with --inspect. */
async function inspectorSession(port) {
  const [target] = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
  const { default: WebSocket } = await import('ws');
  const ws = new WebSocket(target.webSocketDebuggerUrl, { perMessageDeflate: false });
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  let lastId = 0;
  const pending = new Map();
  ws.on('message', (data) => {
    const message = JSON.parse(data.toString());
    const waiter = pending.get(message.id);
    if (!waiter) return;
    pending.delete(message.id);
    if (message.error) waiter.reject(new Error(`${message.error.message}`));
    else waiter.resolve(message.result);
  });
  return {
    call: (method, params = {}) =>
      new Promise((resolve, reject) => {
        pending.set(++lastId, { resolve, reject });
        ws.send(JSON.stringify({ id: lastId, method, params }));
      }),
    close: () => ws.close(),
  };
}

function stats(values) {
  if (values.length === 0) return { count: 0 };
  const sorted = Float64Array.from(values).sort();
  const at = (q) => +sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * q) - 1)].toFixed(1);
  return {
    count: sorted.length,
    p50: at(0.5),
    p90: at(0.9),
    p99: at(0.99),
    max: +sorted[sorted.length - 1].toFixed(1),
    mean: +(sum(sorted) / sorted.length).toFixed(1),
  };
}

function sum(values) {
  let total = 0;
  for (const v of values) total += v;
  return total;
}

function mergeCounts(list) {
  const merged = {};
  for (const counts of list) for (const [k, v] of Object.entries(counts)) merged[k] = (merged[k] ?? 0) + v;
  return merged;
}

function rssKb(pid, field = 'VmRSS') {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(field));
  return Number(line.split(/\s+/)[1]);
}

function mb(kb) {
  return +(kb / 1024).toFixed(1);
}

/** User + system CPU time of a process so far, in ms (from /proc/<pid>/stat, in clock ticks of 10 ms). */
function cpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** All CPUs' busy and total time so far, in ms (/proc/stat, in clock ticks of 10 ms). */
function hostCpuMs() {
  const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
  const total = sum(ticks.slice(0, 8));
  const idle = ticks[3] + ticks[4]; // idle + iowait
  return { totalMs: total * 10, busyMs: (total - idle) * 10 };
}

function openFileLimit() {
  const line = readFileSync('/proc/self/limits', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('Max open files'));
  const [soft, hard] = line
    .split(/\s{2,}/)
    .slice(1, 3)
    .map((v) => (v === 'unlimited' ? Infinity : Number(v)));
  return { soft, hard };
}

/** Pins every thread of a process to one CPU; false when taskset is not there. */
function pin(pid, cpu) {
  return spawnSync('taskset', ['-a', '-cp', String(cpu), String(pid)], { stdio: 'ignore' }).status === 0;
}
