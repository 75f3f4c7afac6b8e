/**
 * Load scenarios run against the service. Each names the request autocannon
 * repeats; `prepare` may create what the request needs (keys, data) through
 * the service's own API and return extra request options. `cachedRead`: served
 * without the database (what `npm run bench:instructions` counts by default).
 */
import autocannon from 'autocannon';
import { BENCH_ADMIN } from './service-env.js';

const TRIP_POINTS = Number(process.env.BENCH_TRIP_POINTS ?? 100_000);

let apiKey;
let adminToken;

async function admin(baseUrl) {
  adminToken ??= (await post(baseUrl, '/v1/auth/login', { identifier: BENCH_ADMIN.username, password: BENCH_ADMIN.password })).session_token;
  return adminToken;
}

/** One API key for the read scenarios, created through the API as the bootstrap admin. */
async function benchKey(baseUrl) {
  apiKey ??= (await post(baseUrl, '/v1/api-keys', { name: 'bench', scopes: ['roles:read', 'gps:read', 'gps:write', 'trips:read'] }, await admin(baseUrl))).key;
  return apiKey;
}

const withKey = async (baseUrl) => ({ headers: { authorization: `Bearer ${await benchKey(baseUrl)}` } });

const POINT = { latitude: 53.55, longitude: 9.99, altitude: 3, heading: 180, speed_kmh: 10, speed_mps: 2.78, speed_mph: 6.2, speed_knots: 5.4 };

/** A latest point to read. */
async function withLatestPoint(baseUrl) {
  const key = await benchKey(baseUrl);
  await post(baseUrl, '/v1/gps', { ...POINT, timestamp: Math.floor(Date.now() / 1000) }, key);
  return withKey(baseUrl);
}

/** 50 devices, each with its own key; autocannon sends each request with the next one. */
async function withDeviceKeys(baseUrl) {
  const token = await admin(baseUrl);
  const keys = [];
  for (let i = 0; i < 50; i++) {
    const created = await post(baseUrl, '/v1/api-keys', { name: `device ${i}`, scopes: ['gps:write'] }, token);
    await post(baseUrl, '/v1/devices', { name: `device ${i}`, api_key_id: created.id }, token);
    keys.push(created.key);
  }
  let next = 0;
  return {
    setupRequest: (request) => ({
      ...request,
      headers: { ...request.headers, 'content-type': 'application/json', authorization: `Bearer ${keys[next++ % keys.length]}` },
      body: JSON.stringify({ ...POINT, timestamp: Math.floor(Date.now() / 1000) }),
    }),
  };
}

/** A GPS-logging trip filled with TRIP_POINTS points, sent through POST /v1/gps by its device. */
async function withLongTrip(baseUrl) {
  const token = await admin(baseUrl);
  const key = await post(baseUrl, '/v1/api-keys', { name: 'long trip device', scopes: ['gps:write'] }, token);
  const device = await post(baseUrl, '/v1/devices', { name: 'long trip device', api_key_id: key.id }, token);
  const trip = await post(baseUrl, '/v1/trips', { name: 'long trip', device_id: device.data.id, gps_logging_enabled: true }, token);
  await request(baseUrl, 'PATCH', `/v1/trips/${trip.data.id}`, { status: 'active' }, token);
  let second = 1_700_000_000;
  const started = Date.now();
  await autocannon({
    url: baseUrl,
    connections: 20,
    amount: TRIP_POINTS,
    requests: [
      {
        method: 'POST',
        path: '/v1/gps',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key.key}` },
        setupRequest: (req) => ({ ...req, body: JSON.stringify({ ...POINT, timestamp: second++ }) }),
      },
    ],
  });
  console.log(`(filled a trip with ${TRIP_POINTS} points in ${Math.round((Date.now() - started) / 1000)} s)`);
  return { path: `/v1/trips/${trip.data.id}/gps`, ...(await withKey(baseUrl)) };
}

export const scenarios = [
  { name: 'GET /v1/health', request: { method: 'GET', path: '/v1/health' } },
  { name: 'GET /v1 (anonymous)', request: { method: 'GET', path: '/v1' }, cachedRead: true },
  // The same cheap route with a credential: the difference is the cost of authentication.
  { name: 'GET /v1 (API key)', request: { method: 'GET', path: '/v1' }, prepare: withKey, cachedRead: true },
  { name: 'GET /v1/roles (API key)', request: { method: 'GET', path: '/v1/roles' }, prepare: withKey },
  { name: 'GET /v1/gps/current (API key)', request: { method: 'GET', path: '/v1/gps/current' }, prepare: withLatestPoint, cachedRead: true },
  { name: 'POST /v1/gps (50 device keys)', request: { method: 'POST', path: '/v1/gps' }, prepare: withDeviceKeys },
  { name: 'GET /v1/trips/{id}/gps (100k points)', request: { method: 'GET', path: '/v1/trips' }, prepare: withLongTrip },
];

const post = (baseUrl, path, body, token) => request(baseUrl, 'POST', path, body, token);

async function request(baseUrl, method, path, body, token) {
  const response = await fetch(baseUrl + path, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return response.json();
}
