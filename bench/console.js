// The web console in headless Chromium (Debian's, /usr/bin/chromium, or CHROMIUM_PATH), against the built service
// on the embedded database, with the load issue 49 names: 10,000 devices (one point each) moving 1,000 a second,
// 52 devices for the latency of one marker, and one device holding a 100,000-point track:
//   npm run bench:console
//   CONSOLE_DEVICES=10000  CONSOLE_RATE=1000 (points/s in total)  CONSOLE_SECONDS=10  CONSOLE_TRACK=100000
//   CONSOLE_RUNS=3  CONSOLE_SAMPLES=100 (points timed for the latency)
// 0. Latency, while the service holds only 52 devices (the first of them; spread so that none clusters): the page
//    notes when each marker moves (a MutationObserver on its data-latitude, Date.now()); Node posts one point at a
//    time (POST /v1/gps, a few hundred metres from the last) to a device whose marker stands alone and notes the
//    time before the post: post to marker moved, p50 and p95.
// 1. First map paint after sign-in: from the click on "Sign in" to every device on the map (its marker, or counted in
//    a cluster) and a tile drawn (the frame after both are in the DOM), read in Node around the click; and from
//    the login's answer (the page's mark 'signed-in', after the password hash is checked) to that frame, with the
//    page's marks for reading the map's data (devices, latest points) and placing the markers.
// 2. Live: CONSOLE_RATE points/s over all devices (POST /v1/gps/batch ten times a second, random devices) for
//    CONSOLE_SECONDS; the page's main-thread busy share is Chromium's TaskDuration (Performance.getMetrics over
//    CDP: every task on the renderer's main thread) over the wall time; long tasks (> 50 ms) from a
//    PerformanceObserver; the markers moved on screen (not those inside a cluster) are counted in the page.
// 3. Track: first the CSV export and GET /v1/gps/track (thinned for the page's 1280 × 507 map) read in Node alone (the
//    server's part); then the history page draws the day: time from the click on "Show track" to the frame after
//    the canvas is drawn, and the page's own marks (request to parsed: GET /v1/gps/track answered and read into
//    typed arrays; parsed to drawn: projection and the first draw), with the number of points drawn.
// Goals (issue 49): first paint < 1.5 s, main thread busy < 50 %, marker moved < 300 ms p95; track on screen < 1 s
// (issue 41). Results: bench/results/console.json.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { freePort, ROOT, waitUntilReady, writeResult } from './lib.js';
import { BENCH_ADMIN, serviceEnv } from './service-env.js';

const DEVICES = Number(process.env.CONSOLE_DEVICES ?? 10_000);
const RATE = Number(process.env.CONSOLE_RATE ?? 1000);
const SECONDS = Number(process.env.CONSOLE_SECONDS ?? 10);
const TRACK = Number(process.env.CONSOLE_TRACK ?? 100_000);
const RUNS = Number(process.env.CONSOLE_RUNS ?? 3);
const SAMPLES = Number(process.env.CONSOLE_SAMPLES ?? 100);
/** The latency's fleet: the 52 devices. */
const FLEET = 52;
const GOALS = { first_paint_ms: 1500, main_thread_busy_pct: 50, marker_p95_ms: 300, track_ms: 1000 };
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
// A 1×1 PNG for every tile: the tile server is not what is measured.
const TILE = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

const tiles = createServer((_request, response) =>
  response.writeHead(200, { 'content-type': 'image/png', 'cache-control': 'max-age=3600' }).end(TILE),
);
await new Promise((resolve) => tiles.listen(0, '127.0.0.1', resolve));
const dataDir = mkdtempSync(join(tmpdir(), 'waygate-bench-console-'));
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const server = spawn(process.execPath, [join(ROOT, 'dist', 'main.js'), 'serve'], {
  env: {
    ...process.env,
    ...serviceEnv,
    RATE_LIMIT_ENABLED: 'false',
    HOST: '127.0.0.1',
    PORT: String(port),
    DATA_DIR: dataDir,
    PUBLIC_URL: base,
    MAP_TILE_URL: `http://127.0.0.1:${tiles.address().port}/{z}/{x}/{y}.png`,
  },
  stdio: ['ignore', 'inherit', 'inherit'],
});
let browser;
try {
  await waitUntilReady('service', server, `${base}/v1/health`, 60);
  const token = (
    await call('POST', '/v1/auth/login', { identifier: BENCH_ADMIN.username, password: BENCH_ADMIN.password })
  ).session_token;
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: CHROMIUM_ARGS,
  });
  const fleet = await makeDevices(token, 0, FLEET);
  const latency = await measureLatency(token, fleet);
  console.log(`marker moved after its post, ${FLEET} devices:`, latency);
  const deviceIds = [...fleet, ...(await makeDevices(token, FLEET, DEVICES - FLEET))];
  const trackDevice = deviceIds[0];
  const trackStart = Date.UTC(2026, 0, 15) / 1000;
  await makeTrack(token, trackDevice, trackStart);
  console.log(`service ready: ${DEVICES} devices, a ${TRACK}-point track`);
  // The server's part of the track: the CSV export read to its end in Node, no browser.
  const exportStarted = performance.now();
  const csv = await (
    await fetch(`${base}/v1/gps/export?device_id=${trackDevice}&format=csv`, {
      headers: { authorization: `Bearer ${token}` },
    })
  ).text();
  const exportCsvMs = Math.round(performance.now() - exportStarted);
  console.log(`CSV export of the track: ${exportCsvMs} ms, ${(csv.length / 1e6).toFixed(1)} MB`);
  // The server's part of the first paint: the map's requests, each alone, read to the end in Node.
  const timed = async (path) => {
    const started = performance.now();
    const text = await (await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } })).text();
    return {
      path: path.replace(/after=.*/, 'after=…'),
      ms: Math.round(performance.now() - started),
      kB: Math.round(text.length / 1000),
      text,
    };
  };
  const firstPage = await timed('/v1/map/devices');
  const mapRequests = [
    firstPage,
    await timed(`/v1/map/devices?after=${JSON.parse(firstPage.text).next}`),
    await timed('/v1/gps/current/devices'),
  ].map(({ text, ...rest }) => rest);
  console.log("the map's requests alone:");
  console.table(mapRequests);
  const trackStarted = performance.now();
  // The day the history page shows (the device's one point of today, from makeDevices, is not in it).
  const day = `from=${new Date((trackStart - 86_400) * 1000).toISOString()}&to=${new Date((trackStart + 2 * 86_400) * 1000).toISOString()}`;
  const thinned = await (
    await fetch(`${base}/v1/gps/track?device_id=${trackDevice}&${day}&width=1280&height=507`, {
      headers: { authorization: `Bearer ${token}` },
    })
  ).text();
  const trackApiMs = Math.round(performance.now() - trackStarted);
  const { points: thinnedPoints, zoom: thinnedZoom } = JSON.parse(thinned);
  console.log(
    `GET /v1/gps/track (1280 × 507, the page's map): ${trackApiMs} ms, ${thinnedPoints} of ${TRACK} points at zoom ${thinnedZoom}, ${(thinned.length / 1e3).toFixed(0)} kB`,
  );

  const runs = [];
  for (let run = 0; run < RUNS; run++) runs.push(await measureOnce(token, deviceIds, trackDevice, run));
  const median = (key) => runs.map((r) => r[key]).sort((a, b) => a - b)[Math.floor(runs.length / 2)];
  const result = {
    devices: DEVICES,
    rate_per_s: RATE,
    seconds: SECONDS,
    track_points: TRACK,
    goals: GOALS,
    export_csv_ms: exportCsvMs,
    export_csv_bytes: csv.length,
    track_api_ms: trackApiMs,
    track_api_bytes: thinned.length,
    map_requests: mapRequests,
    latency_devices: FLEET,
    latency,
    runs,
    median: Object.fromEntries(Object.keys(runs[0]).map((key) => [key, median(key)])),
  };
  console.table(runs);
  console.log('median', result.median);
  writeResult('console', result);
} finally {
  await browser?.close();
  server.kill('SIGTERM');
  await new Promise((resolve) => server.once('exit', resolve));
  tiles.close();
  rmSync(dataDir, { recursive: true, force: true });
}

async function call(method, path, body, token) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return response.json();
}

function point(deviceId, latitude, longitude, timestamp, kmh) {
  return {
    device_id: deviceId,
    latitude,
    longitude,
    timestamp,
    altitude: 0,
    heading: 0,
    speed_kmh: kmh,
    speed_mps: kmh / 3.6,
    speed_mph: kmh / 1.609344,
    speed_knots: kmh / 1.852,
  };
}

/** `count` devices named from `first` on, each with one point; the fleet's first 52 on a grid wide enough that none clusters. */
async function makeDevices(token, first, count) {
  const ids = [];
  for (let i = 0; i < count; i += 20) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(20, count - i) }, (_, j) =>
        call('POST', '/v1/devices', { name: `Bench ${String(first + i + j).padStart(5, '0')}` }, token),
      ),
    );
    ids.push(...batch.map((created) => created.data.id));
  }
  const now = Math.floor(Date.now() / 1000);
  for (let i = 0; i < ids.length; i += 5000)
    await call(
      'POST',
      '/v1/gps/batch',
      ids.slice(i, i + 5000).map((id, j) => point(id, ...homeOf(first + i + j), now - 60, 10)),
      token,
    );
  return ids;
}

/** Where device n starts: the fleet 1° apart over Germany (8 by 7), the others scattered over its north. */
function homeOf(n) {
  return n < FLEET ? [48 + Math.floor(n / 8), 6 + (n % 8)] : [52 + (n % 40) * 0.05, 8 + Math.floor(n / 40) * 0.1];
}

async function makeTrack(token, deviceId, start) {
  for (let i = 0; i < TRACK; i += 10_000) {
    const batch = Array.from({ length: Math.min(10_000, TRACK - i) }, (_, j) => {
      const n = i + j;
      return point(
        deviceId,
        53.5 + Math.sin(n / 5000) * 0.2 + n * 0.000002,
        10 + Math.cos(n / 7000) * 0.3,
        start + n,
        40 + 40 * Math.sin(n / 300),
      );
    });
    const { stored, refused } = await call('POST', '/v1/gps/batch', batch, token);
    if (stored !== batch.length)
      throw new Error(`track batch: ${stored} stored, refused ${JSON.stringify(refused.slice(0, 3))}`);
  }
}

/** Until every device is on the map (a marker of its own, or counted in a cluster's number) and a tile is drawn. */
function allOnMap(page, count) {
  return page.waitForFunction(
    (n) =>
      document.querySelectorAll('.leaflet-marker-icon.device-marker').length +
        [...document.querySelectorAll('.device-cluster [aria-hidden="true"]')].reduce(
          (sum, number) => sum + Number(number.textContent),
          0,
        ) >=
        n && document.querySelector('.leaflet-tile-loaded'),
    count,
    { polling: 'raf', timeout: 60_000 },
  );
}

/** A new page at the sign-in form, filled in; the caller clicks. */
async function signInForm(errors) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  page.on('pageerror', (err) => errors.push(err.message));
  // The points the page's WebSocket brings are counted, to tell a busy page from one that was sent nothing.
  await page.addInitScript(() => {
    window.benchMessages = 0;
    const Native = window.WebSocket;
    window.WebSocket = class extends Native {
      constructor(...args) {
        super(...args);
        this.addEventListener('message', () => (window.benchMessages += 1));
      }
    };
  });
  await page.goto(`${base}/console/`);
  await page.getByLabel('Username or email').fill(BENCH_ADMIN.username);
  await page.getByLabel('Password').fill(BENCH_ADMIN.password);
  return { context, page };
}

/** Post to marker moved, for SAMPLES points one at a time to the fleet's devices whose markers stand alone. */
async function measureLatency(token, fleet) {
  const errors = [];
  const { context, page } = await signInForm(errors);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByText('Live updates on').waitFor();
  await allOnMap(page, FLEET);
  const alone = await page.evaluate(() => {
    window.benchMoved = new Map();
    new MutationObserver((records) => {
      const at = Date.now();
      for (const { target } of records)
        window.benchMoved.set(`${target.dataset.device} ${target.dataset.latitude}`, at);
    }).observe(document.querySelector('.leaflet-marker-pane'), {
      attributes: true,
      attributeFilter: ['data-latitude'],
      subtree: true,
    });
    return [...document.querySelectorAll('.device-marker[data-device]')].map((marker) => marker.dataset.device);
  });
  const ids = fleet.filter((id) => alone.includes(id));
  const times = [];
  let missed = 0;
  for (let i = 0; i < SAMPLES; i++) {
    const n = i % ids.length;
    const [latitude, longitude] = homeOf(fleet.indexOf(ids[n]));
    // A few hundred metres from home, a new latitude each time (the key the page notes the move under).
    const moved = latitude + 0.001 * (1 + (i % 5)) + i * 1e-7;
    const sent = Date.now();
    await call('POST', '/v1/gps', point(ids[n], moved, longitude, Math.floor(sent / 1000), 12), token);
    const seen = await page
      .waitForFunction((key) => window.benchMoved.get(key), `${ids[n]} ${moved}`, { polling: 10, timeout: 3000 })
      .then(
        (handle) => handle.jsonValue(),
        () => null,
      );
    if (seen === null) missed += 1;
    else times.push(seen - sent);
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  await context.close();
  if (errors.length) console.error('latency: page errors', errors);
  times.sort((a, b) => a - b);
  const at = (q) => times[Math.min(times.length - 1, Math.floor(q * times.length))];
  return {
    markers_alone: ids.length,
    samples: times.length,
    missed,
    p50_ms: at(0.5),
    p95_ms: at(0.95),
    max_ms: times.at(-1),
  };
}

async function measureOnce(token, deviceIds, trackDevice, run) {
  const errors = [];
  const { context, page } = await signInForm(errors);
  const clicked = performance.now();
  await page.getByRole('button', { name: 'Sign in' }).click();
  await allOnMap(page, DEVICES);
  // The page's requests until then, from the sign-in on: what the first paint waited for.
  const requests = await page.evaluate(() => {
    const from = performance.getEntriesByName('signed-in').at(-1)?.startTime ?? 0;
    return performance
      .getEntriesByType('resource')
      .filter((entry) => entry.startTime >= from && entry.name.includes('/v1/'))
      .map((entry) => ({
        path: new URL(entry.name).pathname + new URL(entry.name).search,
        start: Math.round(entry.startTime - from),
        waiting: Math.round(entry.responseStart - entry.requestStart),
        reading: Math.round(entry.responseEnd - entry.responseStart),
        kB: Math.round(entry.transferSize / 1000),
      }));
  });
  console.log(`run ${run}: requests after the sign-in (ms from it)`);
  console.table(requests);
  const paintedAt = await page.evaluate(
    () =>
      new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve(performance.now())))),
  );
  const firstPaint = performance.now() - clicked;
  // The page's marks: the login's answer (password hashing included), the map's data read, the markers placed.
  const signIn = await page.evaluate((painted) => {
    const at = (name) => performance.getEntriesByName(name).at(-1)?.startTime ?? Number.NaN;
    return {
      data: at('map-data') - at('signed-in'),
      placed: at('map-placed') - at('map-data'),
      painted: painted - at('signed-in'),
    };
  }, paintedAt);
  await page.getByText('Live updates on').waitFor();

  // Live points: RATE per second over random devices, evenly spaced; the page counts the markers that move.
  await page.evaluate(() => {
    window.benchLongTasks = [];
    new PerformanceObserver((list) => window.benchLongTasks.push(...list.getEntries().map((e) => e.duration))).observe({
      type: 'longtask',
    });
    window.benchMoves = 0;
    window.benchMessages = 0;
    new MutationObserver((records) => {
      window.benchMoves += records.length;
    }).observe(document.querySelector('.leaflet-marker-pane'), {
      attributes: true,
      attributeFilter: ['data-latitude'],
      subtree: true,
    });
  });
  const cdp = await context.newCDPSession(page);
  await cdp.send('Performance.enable');
  const taskTime = async () =>
    (await cdp.send('Performance.getMetrics')).metrics.find((m) => m.name === 'TaskDuration').value;
  const beforeTasks = await taskTime();
  const started = performance.now();
  const sends = [];
  // Ten batches a second, each RATE / 10 points of random devices.
  const perBatch = Math.max(1, Math.round(RATE / 10));
  const total = perBatch * 10 * SECONDS;
  for (let i = 0; i < total / perBatch; i++) {
    const due = started + i * 100;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const at = Math.floor(Date.now() / 1000) + 1;
    const batch = Array.from({ length: perBatch }, () =>
      point(
        deviceIds[Math.floor(Math.random() * deviceIds.length)],
        52 + Math.random() * 2,
        8 + Math.random() * 4,
        at,
        30,
      ),
    );
    sends.push(call('POST', '/v1/gps/batch', batch, token));
  }
  await Promise.all(sends);
  await new Promise((resolve) => setTimeout(resolve, 500));
  const busy = ((await taskTime()) - beforeTasks) / ((performance.now() - started) / 1000);
  const live = await page.evaluate(() => ({
    longTasks: window.benchLongTasks.length,
    longest: Math.max(0, ...window.benchLongTasks),
    moves: window.benchMoves,
    messages: window.benchMessages,
  }));

  // The track: the history page, the track device's day.
  await page.goto(`${base}/console/#/history`);
  await page.getByLabel('Device', { exact: true }).selectOption(trackDevice);
  await page.getByLabel('From', { exact: true }).fill('2026-01-14T00:00');
  await page.getByLabel('To', { exact: true }).fill('2026-01-17T00:00');
  const trackRequests = [];
  page.on('request', (request) => {
    if (request.url().includes('/v1/gps/track')) trackRequests.push(new URL(request.url()).search);
  });
  const asked = performance.now();
  await page.getByRole('button', { name: 'Show track' }).click();
  await page.waitForFunction(
    (n) =>
      document.querySelector('.history .map')?.dataset.points === String(n) ||
      document.querySelector('.history [role=alert]'),
    TRACK,
    { polling: 'raf', timeout: 60_000 },
  );
  const shown = await page.evaluate(
    () =>
      document.querySelector('.history .map')?.dataset.points ??
      document.querySelector('.history [role=alert]')?.textContent,
  );
  if (shown !== String(TRACK)) throw new Error(`the history page shows ${shown}`);
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
  const trackMs = performance.now() - asked;
  const marks = await page.evaluate(() => {
    const at = (name) => performance.getEntriesByName(name).at(-1)?.startTime ?? Number.NaN;
    return {
      fetchParse: at('history-parsed') - at('history-request'),
      draw: at('history-drawn') - at('history-parsed'),
      drawn: Number(document.querySelector('.history .map').dataset.drawn),
    };
  });
  // Scrubbing: the timeline moved to 20 places, each a full redraw.
  const scrub = await page.evaluate(async () => {
    const input = document.querySelector('input[type="range"]');
    const times = [];
    for (let i = 1; i <= 20; i++) {
      const t0 = performance.now();
      input.value = String(Math.floor((Number(input.max) * i) / 20));
      input.dispatchEvent(new Event('input'));
      await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
      times.push(performance.now() - t0);
    }
    return times.sort((a, b) => a - b)[Math.floor(times.length / 2)];
  });
  console.log(
    `run ${run}: the history page asked`,
    trackRequests
      .map((query) => Object.fromEntries(new URLSearchParams(query)))
      .map(({ zoom, width, height }) => ({ zoom, width, height })),
  );
  await context.close();
  if (errors.length) console.error(`run ${run}: page errors`, errors);
  const round = (value) => Math.round(value * 10) / 10;
  return {
    first_paint_ms: round(firstPaint),
    after_login_ms: round(signIn.painted),
    map_data_ms: round(signIn.data),
    markers_placed_ms: round(signIn.placed),
    main_thread_busy_pct: round(busy * 100),
    long_tasks: live.longTasks,
    longest_task_ms: round(live.longest),
    markers_moved: live.moves,
    messages_received: live.messages,
    points_sent: total,
    track_ms: round(trackMs),
    track_points_drawn: marks.drawn,
    track_fetch_parse_ms: round(marks.fetchParse),
    track_draw_ms: round(marks.draw),
    scrub_frame_median_ms: round(scrub),
  };
}
