// Batch ingest with geofences against without (issue 44): two copies of the built service on the embedded
// database, each with 1,000 devices; one also holds 10,000 active geofences (half circles, half 50-vertex
// polygons) over the area the points fall in, so most points meet a geofence's bounding box and every batch is
// evaluated. Both get the same batches (POST /v1/gps/batch, 10,000 points over the 1,000 devices, 2 in flight),
// in alternating rounds after a warm-up round each; the figure is the ratio of their median rates. Each device
// drives a straight line at 36 km/h, so it crosses a border now and then, as a vehicle does.
//   npm run bench:geofences        GEOFENCE_ROUNDS=5  GEOFENCE_BATCHES=6 (per round)  GEOFENCES=10000
// Goal: with geofences >= 0.9 x the rate without. Results: bench/results/geofence-ingest.json.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apiCall, freePort, median, ROOT, waitUntilReady, writeResult } from './lib.js';
import { BENCH_ADMIN, serviceEnv } from './service-env.js';

const DEVICES = 1000;
const GEOFENCES = Number(process.env.GEOFENCES ?? 10_000);
const ROUNDS = Number(process.env.GEOFENCE_ROUNDS ?? 5);
const BATCHES = Number(process.env.GEOFENCE_BATCHES ?? 6);
const BATCH = 10_000;
const PARALLEL = 2;
const GOAL = 0.9;
/** The area of the points and the geofences: about 110 km by 70 km around Hamburg. */
const AREA = { south: 53, north: 54, west: 9.5, east: 10.5 };
const SPEEDS = { speed_kmh: 36, speed_mps: 10, speed_mph: 22.37, speed_knots: 19.44 };

const services = [];
try {
  const plain = await startService('without geofences');
  const fenced = await startService('with geofences');
  services.push(plain, fenced);
  await Promise.all([plain, fenced].map(makeDevices));
  await makeGeofences(fenced);
  console.log(`ready: ${DEVICES} devices each, ${GEOFENCES} geofences on one`);

  // Each device drives its own straight line at 36 km/h (10 m a second, a point a second), from a place and in a
  // direction of its own, the same on both services: it crosses a geofence's border now and then, as a vehicle
  // does (points thrown anywhere would cross dozens each, a load no fleet makes).
  const walks = Array.from({ length: DEVICES }, () => ({
    latitude: AREA.south + Math.random() * (AREA.north - AREA.south),
    longitude: AREA.west + Math.random() * (AREA.east - AREA.west),
    angle: Math.random() * 2 * Math.PI,
  }));
  const METRE = 1 / 111_195;
  /** Points/s of one round: BATCHES batches, PARALLEL at a time; every point of a device has its own time. */
  const round = async (service) => {
    const batches = Array.from({ length: BATCHES }, (_batch, b) =>
      Array.from({ length: BATCH }, (_point, i) => {
        const walk = walks[i % DEVICES];
        // Seconds since the walk began on this service: each service keeps its own time.
        const seconds = service.seconds + b * (BATCH / DEVICES) + Math.floor(i / DEVICES);
        return {
          device_id: service.devices[i % DEVICES],
          latitude: walk.latitude + Math.sin(walk.angle) * 10 * seconds * METRE,
          longitude: walk.longitude + (Math.cos(walk.angle) * 10 * seconds * METRE) / Math.cos((53.5 * Math.PI) / 180),
          timestamp: 1_700_000_000 + seconds,
          accuracy: 10,
          ...SPEEDS,
        };
      }),
    );
    service.seconds += BATCHES * (BATCH / DEVICES);
    const started = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: PARALLEL }, async () => {
        while (next < batches.length) {
          const { stored } = await apiCall(service.base, 'POST', '/v1/gps/batch', batches[next++], service.token);
          if (stored !== BATCH) throw new Error(`${service.name}: ${stored} of ${BATCH} stored`);
        }
      }),
    );
    return Math.round((BATCHES * BATCH) / ((performance.now() - started) / 1000));
  };
  await round(plain);
  await round(fenced);
  const rates = { plain: [], fenced: [] };
  for (let r = 0; r < ROUNDS; r++) {
    // Alternating which goes first, so neither always meets the other's leftovers (vacuum, GC).
    for (const [name, service] of r % 2
      ? [
          ['fenced', fenced],
          ['plain', plain],
        ]
      : [
          ['plain', plain],
          ['fenced', fenced],
        ])
      rates[name].push(await round(service));
    console.log(`round ${r + 1}: without ${rates.plain.at(-1)} points/s, with ${rates.fenced.at(-1)} points/s`);
  }
  const [without, withGeofences] = [median(rates.plain), median(rates.fenced)];
  const events = await apiCall(fenced.base, 'GET', '/v1/events?limit=1', undefined, fenced.token).catch(() => null);
  const result = {
    devices: DEVICES,
    geofences: GEOFENCES,
    batch: BATCH,
    rounds: ROUNDS,
    points_per_s_without: without,
    points_per_s_with: withGeofences,
    ratio: Math.round((withGeofences / without) * 1000) / 1000,
    goal: GOAL,
    events_total: events?.pagination?.total ?? null,
    rates,
  };
  console.log(result);
  writeResult('geofence-ingest', result);
} finally {
  for (const service of services) {
    service.child.kill('SIGTERM');
    await new Promise((resolve) => service.child.once('exit', resolve));
    rmSync(service.dataDir, { recursive: true, force: true });
  }
}

async function startService(name) {
  const dataDir = mkdtempSync(join(tmpdir(), 'waygate-bench-geofences-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [join(ROOT, 'dist', 'main.js'), 'serve'], {
    env: {
      ...process.env,
      ...serviceEnv,
      RATE_LIMIT_ENABLED: 'false',
      HOST: '127.0.0.1',
      PORT: String(port),
      DATA_DIR: dataDir,
      PUBLIC_URL: base,
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const service = { name, base, child, dataDir, devices: [], token: '', seconds: 0 };
  await waitUntilReady(name, child, `${base}/v1/health`, 60);
  service.token = (
    await apiCall(base, 'POST', '/v1/auth/login', { identifier: BENCH_ADMIN.username, password: BENCH_ADMIN.password })
  ).session_token;
  return service;
}

async function makeDevices(service) {
  for (let i = 0; i < DEVICES; i += 25) {
    const made = await Promise.all(
      Array.from({ length: 25 }, (_, j) =>
        apiCall(service.base, 'POST', '/v1/devices', { name: `Bench ${i + j}` }, service.token),
      ),
    );
    service.devices.push(...made.map((created) => created.data.id));
  }
}

/** Half circles of 0.2 to 2 km, half 50-vertex polygons of about that size, anywhere in the area. */
async function makeGeofences(service) {
  const body = (n) => {
    const latitude = AREA.south + Math.random() * (AREA.north - AREA.south);
    const longitude = AREA.west + Math.random() * (AREA.east - AREA.west);
    const radiusKm = 0.2 + Math.random() * 1.8;
    const circle = { name: `Fence ${n}`, latitude, longitude, radius_km: radiusKm };
    if (n % 2 === 0) return circle;
    const ring = Array.from({ length: 49 }, (_, k) => {
      const angle = (2 * Math.PI * k) / 49;
      // A star-ish outline: the radius wobbles, so the polygon is not a circle in disguise.
      const r = (radiusKm / 111) * (0.7 + 0.3 * Math.sin(angle * 5));
      return [longitude + (r * Math.cos(angle)) / Math.cos((latitude * Math.PI) / 180), latitude + r * Math.sin(angle)];
    });
    return { ...circle, polygon: { type: 'Polygon', coordinates: [[...ring, ring[0]]] } };
  };
  for (let n = 0; n < GEOFENCES; n += 25)
    await Promise.all(
      Array.from({ length: Math.min(25, GEOFENCES - n) }, (_, j) =>
        apiCall(service.base, 'POST', '/v1/geofences', body(n + j), service.token),
      ),
    );
}
