// GPS file export of one device with many points: time, file size and peak RSS growth per format.
//   npm run bench:gps-files                 (1,000,000 points; GPS_FILE_POINTS=… and GPS_FILE_FORMATS=gpx,csv to change)
// In one process: the service on the embedded database (DATABASE_URL=… for PostgreSQL), and a real HTTP
// client reading each file off a socket and throwing it away. RSS is sampled every 5 ms; the growth is the
// peak during a download minus the RSS right before it. Goal (issue 31): under 50 MB for 1,000,000 points.
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../dist/app.js';
import { loadConfig } from '../dist/config.js';
import { openKeyValueStore } from '../dist/platform/kv/index.js';
import { openMigratedDatabase } from '../dist/server.js';
import { BENCH_ADMIN, serviceEnv } from './service-env.js';

const POINTS = Number(process.env.GPS_FILE_POINTS ?? 1_000_000);
const FORMATS = (process.env.GPS_FILE_FORMATS ?? 'gpx,geojson,kml,csv').split(',');
const MB = 1024 * 1024;

const config = loadConfig({ ...serviceEnv, DATA_DIR: mkdtempSync(join(tmpdir(), 'waygate-bench-gps-files-')) });
const { database } = await openMigratedDatabase(config);
const kv = await openKeyValueStore({ kind: 'memory' });
const app = await buildApp(config, { database, kv }, { logger: false });
await app.listen({ host: '127.0.0.1', port: 0 });
const { port } = app.server.address();

const call = async (method, url, token, payload) => {
  const response = await app.inject({ method, url, headers: token ? { authorization: `Bearer ${token}` } : {}, payload });
  if (response.statusCode >= 300) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`);
  return response.json();
};

const signedIn = await call('POST', '/v1/auth/login', null, { identifier: BENCH_ADMIN.username, password: BENCH_ADMIN.password });
const admin = signedIn.session_token;
const device = (await call('POST', '/v1/devices', admin, { name: 'Boat' })).data;
const start = Date.parse('2026-01-01T00:00:00Z');
for (let i = 0; i < POINTS; i += 2000) {
  const rows = [];
  for (let j = i; j < Math.min(i + 2000, POINTS); j++) {
    rows.push({ device_id: device.id, latitude: 52 + j / 1e6, longitude: 13 + j / 1e6, altitude: 30, heading: 90, timestamp: new Date(start + j * 1000), speed_kmh: 10, speed_mps: 2.78, speed_mph: 6.2, speed_knots: 5.4, hdop: 0.8 });
  }
  await database.db.insertInto('gps_points').values(rows).execute();
}

function download(format) {
  return new Promise((resolve, reject) => {
    const path = `/v1/gps/export?device_id=${device.id}&format=${format}`;
    get({ host: '127.0.0.1', port, path, headers: { authorization: `Bearer ${admin}` } }, (response) => {
      let bytes = 0;
      response.on('data', (chunk) => (bytes += chunk.length));
      response.on('end', () => resolve({ status: response.statusCode, bytes }));
      response.on('error', reject);
    }).on('error', reject);
  });
}

const results = [];
for (const format of FORMATS) {
  global.gc?.();
  await new Promise((resolve) => setTimeout(resolve, 200));
  const before = process.memoryUsage.rss();
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 5);
  const began = performance.now();
  const result = await download(format);
  const seconds = (performance.now() - began) / 1000;
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage.rss());
  const summary = {
    format,
    points: POINTS,
    status: result.status,
    file_mb: +(result.bytes / MB).toFixed(1),
    seconds: +seconds.toFixed(2),
    points_per_second: Math.round(POINTS / seconds),
    rss_peak_growth_mb: +((peak - before) / MB).toFixed(1),
    goal_rss_growth_mb: 50,
  };
  console.log(summary);
  results.push(summary);
}
mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
writeFileSync(new URL('./results/gps-files-export.json', import.meta.url), `${JSON.stringify({ results, node: process.version, at: new Date().toISOString() }, null, 2)}\n`);
await app.close();
await kv.close();
await database.close();
