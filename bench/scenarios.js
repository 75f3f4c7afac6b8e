/**
 * Load scenarios run against the service. Each names the request autocannon
 * repeats; `prepare` may create what the request needs (keys, data) through
 * the service's own API and return extra request options (it is given the service's URL and `{ dataDir }`, its
 * DATA_DIR). `cachedRead`: served without the database (what `npm run bench:instructions` counts by default).
 * `versus`: the same request by another caller (`label`, `prepare`), measured in the same rounds, the two taking
 * turns, and compared (run.js prints and stores the ratios).
 */
import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { BENCH_ADMIN, BENCH_ID_APP_SECRET } from './service-env.js';

const TRIP_POINTS = Number(process.env.BENCH_TRIP_POINTS ?? 100_000);

let apiKey;
let adminToken;

async function admin(baseUrl) {
  adminToken ??= (
    await post(baseUrl, '/v1/auth/login', { identifier: BENCH_ADMIN.username, password: BENCH_ADMIN.password })
  ).session_token;
  return adminToken;
}

/** One API key for the read scenarios, created through the API as the bootstrap admin. */
async function benchKey(baseUrl) {
  apiKey ??= (
    await post(
      baseUrl,
      '/v1/api-keys',
      { name: 'bench', scopes: ['roles:read', 'gps:read', 'gps:write', 'trips:read'] },
      await admin(baseUrl),
    )
  ).key;
  return apiKey;
}

const withKey = async (baseUrl) => ({ headers: { authorization: `Bearer ${await benchKey(baseUrl)}` } });
const withSession = async (baseUrl) => ({ headers: { authorization: `Bearer ${await admin(baseUrl)}` } });

const POINT = {
  latitude: 53.55,
  longitude: 9.99,
  altitude: 3,
  heading: 180,
  speed_kmh: 10,
  speed_mps: 2.78,
  speed_mph: 6.2,
  speed_knots: 5.4,
};

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
    setupRequest: (sent) => ({
      ...sent,
      headers: {
        ...sent.headers,
        'content-type': 'application/json',
        authorization: `Bearer ${keys[next++ % keys.length]}`,
      },
      body: JSON.stringify({ ...POINT, timestamp: Math.floor(Date.now() / 1000) }),
    }),
  };
}

/** A GPS-logging trip filled with TRIP_POINTS points, sent through POST /v1/gps by its device. */
async function withLongTrip(baseUrl) {
  const token = await admin(baseUrl);
  const key = await post(baseUrl, '/v1/api-keys', { name: 'long trip device', scopes: ['gps:write'] }, token);
  const device = await post(baseUrl, '/v1/devices', { name: 'long trip device', api_key_id: key.id }, token);
  const trip = await post(
    baseUrl,
    '/v1/trips',
    { name: 'long trip', device_id: device.data.id, gps_logging_enabled: true },
    token,
  );
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

/** A user who signed up as anyone does (role User only): registered, then the mailed link followed (DATA_DIR/outbox). */
async function signedUp(baseUrl, dataDir, username) {
  const email = `${username}@example.org`;
  await post(baseUrl, '/v1/auth/register', { email, username, password: BENCH_ADMIN.password });
  const signedIn = await post(baseUrl, '/v1/auth/register/verify', { token: mailedToken(dataDir, email) });
  return { id: signedIn.user_id, token: signedIn.session_token };
}

/** The token of the link mailed to `email`: without SMTP_URL the service writes its mail to DATA_DIR/outbox. */
function mailedToken(dataDir, email) {
  const outbox = join(dataDir, 'outbox');
  for (const file of readdirSync(outbox).sort().reverse()) {
    // Quoted-printable: soft line breaks and =XX escapes undone.
    const mail = readFileSync(join(outbox, file), 'utf8')
      .replace(/=\r?\n/g, '')
      .replace(/=([0-9A-F]{2})/g, (_, hex) => String.fromCharCode(parseInt(hex, 16)));
    if (!mail.includes(`To: ${email}`)) continue;
    const token = /[?&]token=([^&\s"<>]+)/.exec(mail)?.[1];
    if (token) return decodeURIComponent(token);
  }
  throw new Error(`no mail with a token to ${email} in ${outbox}`);
}

const OWN_DEVICES = 5;
const SHARED_DEVICES = 20;
const POINTS_PER_DEVICE = 10;
let sharing;

/**
 * Issue 43's like-for-like: a self-service user owning 5 devices, 20 more shared with them by 4 people (5 each, at
 * live, history of 7 days and full in turn), every device with points, and those 25 devices the only ones of the
 * instance with points: for a holder of gps:read, /v1/gps/current/devices answers every device of the instance, so
 * both callers read the same 25 latest points (and /v1/gps/current the same newest one). Made once; it runs before
 * any scenario that writes points, and refuses to measure when the instance holds other points.
 */
function sharingFixture(baseUrl, { dataDir }) {
  sharing ??= (async () => {
    const holder = await admin(baseUrl);
    const self = await signedUp(baseUrl, dataDir, 'bench_self');
    const deviceIds = [];
    for (let i = 0; i < OWN_DEVICES; i++)
      deviceIds.push((await post(baseUrl, '/v1/devices', { name: `own ${i}` }, self.token)).data.id);
    const levels = ['live', 'history', 'full'];
    for (let owner = 0; owner < SHARED_DEVICES / 5; owner++) {
      const sharer = await signedUp(baseUrl, dataDir, `bench_sharer_${owner}`);
      for (let i = 0; i < 5; i++) {
        const { id } = (await post(baseUrl, '/v1/devices', { name: `shared ${owner}.${i}` }, sharer.token)).data;
        const level = levels[deviceIds.length % levels.length];
        const share = { user_id: self.id, level, ...(level === 'history' ? { history_days: 7 } : {}) };
        await post(baseUrl, `/v1/devices/${id}/shares`, share, sharer.token);
        deviceIds.push(id);
      }
    }
    const now = Math.floor(Date.now() / 1000);
    const points = deviceIds.flatMap((device_id, d) =>
      Array.from({ length: POINTS_PER_DEVICE }, (_, i) => ({
        ...POINT,
        device_id,
        latitude: 53.5 + d / 100,
        timestamp: now - (POINTS_PER_DEVICE - i) * 60 - d,
      })),
    );
    await post(baseUrl, '/v1/gps/batch', points, holder);
    for (const [who, token] of [
      ['the self-service user', self.token],
      ['the admin (gps:read)', holder],
    ]) {
      const latest = await request(baseUrl, 'GET', '/v1/gps/current/devices', undefined, token);
      if (latest.length !== deviceIds.length)
        throw new Error(
          `GET /v1/gps/current/devices answered ${latest.length} points to ${who}, not ${deviceIds.length}: ` +
            'the sharing scenarios need an instance whose only points are theirs (run them first, or alone)',
        );
    }
    return { self: self.token, holder };
  })();
  return sharing;
}

const asSelfService = async (baseUrl, context) => ({
  headers: { authorization: `Bearer ${(await sharingFixture(baseUrl, context)).self}` },
});
const asGlobalHolder = async (baseUrl, context) => ({
  headers: { authorization: `Bearer ${(await sharingFixture(baseUrl, context)).holder}` },
});

const CALLBACK = 'https://bench.example.org/cb';
const form = (fields) => new URLSearchParams(fields).toString();

/** A first-party confidential client, registered through the API by the bootstrap admin. */
async function benchClient(baseUrl) {
  const created = await post(
    baseUrl,
    '/v1/oauth/clients',
    { name: 'bench client', redirect_uris: [CALLBACK], is_first_party: true },
    await admin(baseUrl),
  );
  return {
    id: created.client.id,
    basic: `Basic ${Buffer.from(`${created.client.id}:${created.client_secret}`).toString('base64')}`,
  };
}

/** Client credentials: each request is a full grant (client authentication, token minted and stored). */
async function withClientCredentials(baseUrl) {
  const client = await benchClient(baseUrl);
  return {
    headers: { authorization: client.basic, 'content-type': 'application/x-www-form-urlencoded' },
    body: form({ grant_type: 'client_credentials' }),
  };
}

/** A refresh token of the bench admin: code flow through the first-party handoff (X-ID-App-Assertion). */
async function refreshTokenOf(baseUrl, client, userId) {
  const verifier = randomBytes(32).toString('base64url');
  const issuedAt = String(Math.floor(Date.now() / 1000));
  const nonce = `idaa_${randomUUID().replaceAll('-', '')}`;
  const mac = createHmac('sha256', BENCH_ID_APP_SECRET).update(`id|${userId}|${issuedAt}|${nonce}`).digest('base64url');
  const query = form({
    client_id: client.id,
    response_type: 'code',
    redirect_uri: CALLBACK,
    scope: 'openid',
    state: nonce,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  });
  const authorized = await fetch(`${baseUrl}/v1/oauth/authorize?${query}`, {
    redirect: 'manual',
    headers: { 'x-id-app-assertion': [`id`, userId, issuedAt, nonce, mac].join('.') },
  });
  const code = new URL(authorized.headers.get('location')).searchParams.get('code');
  const tokens = await fetch(`${baseUrl}/v1/oauth/token`, {
    method: 'POST',
    headers: { authorization: client.basic, 'content-type': 'application/x-www-form-urlencoded' },
    body: form({ grant_type: 'authorization_code', code, redirect_uri: CALLBACK, code_verifier: verifier }),
  });
  if (!tokens.ok) throw new Error(`code exchange: ${tokens.status} ${await tokens.text()}`);
  return (await tokens.json()).refresh_token;
}

/**
 * Refresh grants: every request takes a refresh token off a queue, and its response puts the rotated
 * one back, so no token is sent twice (a reused one would revoke its family). autocannon resets each
 * connection's context between requests, hence the shared queue. A run that ends with requests in
 * flight loses their families, so there is a spare family for every connection of every run.
 */
async function withRefreshTokens(baseUrl) {
  const client = await benchClient(baseUrl);
  const userId = (await request(baseUrl, 'GET', '/v1/users/me', undefined, await admin(baseUrl))).data.id;
  const connections = Number(process.env.BENCH_CONNECTIONS ?? 20);
  const runs = Number(process.env.BENCH_ROUNDS ?? 3) + 1;
  const queue = [];
  for (let i = 0; i < connections * (runs + 1); i++) queue.push(await refreshTokenOf(baseUrl, client, userId));
  return {
    setupRequest: (sent) => ({
      ...sent,
      headers: { authorization: client.basic, 'content-type': 'application/x-www-form-urlencoded' },
      body: form({ grant_type: 'refresh_token', refresh_token: queue.shift() }),
    }),
    onResponse: (status, body) => {
      if (status === 200) queue.push(JSON.parse(body).refresh_token);
    },
  };
}

export const scenarios = [
  // Issue 43 (goal: the self-service calls within 5% of the global ones, p50). First: their instance must hold no
  // other points (see sharingFixture). BENCH_ONLY=sharing runs both.
  {
    name: 'GET /v1/gps/current (sharing: 5 own + 20 shared vs gps:read)',
    request: { method: 'GET', path: '/v1/gps/current' },
    prepare: asSelfService,
    versus: { label: 'gps:read', prepare: asGlobalHolder },
  },
  {
    name: 'GET /v1/gps/current/devices (sharing: 5 own + 20 shared vs gps:read)',
    request: { method: 'GET', path: '/v1/gps/current/devices' },
    prepare: asSelfService,
    versus: { label: 'gps:read', prepare: asGlobalHolder },
  },
  { name: 'GET /v1/health', request: { method: 'GET', path: '/v1/health' } },
  { name: 'GET /v1 (anonymous)', request: { method: 'GET', path: '/v1' }, cachedRead: true },
  // The same cheap route with a credential: the difference is the cost of authentication.
  { name: 'GET /v1 (API key)', request: { method: 'GET', path: '/v1' }, prepare: withKey, cachedRead: true },
  { name: 'GET /v1 (session)', request: { method: 'GET', path: '/v1' }, prepare: withSession, cachedRead: true },
  {
    name: 'GET /v1/users/me (session)',
    request: { method: 'GET', path: '/v1/users/me' },
    prepare: withSession,
    cachedRead: true,
  },
  {
    name: 'GET /v1/roles (API key)',
    request: { method: 'GET', path: '/v1/roles' },
    prepare: withKey,
    cachedRead: true,
  },
  {
    name: 'GET /v1/gps/current (API key)',
    request: { method: 'GET', path: '/v1/gps/current' },
    prepare: withLatestPoint,
    cachedRead: true,
  },
  { name: 'POST /v1/gps (50 device keys)', request: { method: 'POST', path: '/v1/gps' }, prepare: withDeviceKeys },
  {
    name: 'GET /v1/trips/{id}/gps (100k points)',
    request: { method: 'GET', path: '/v1/trips' },
    prepare: withLongTrip,
  },
  {
    name: 'POST /v1/oauth/token (client_credentials)',
    request: { method: 'POST', path: '/v1/oauth/token' },
    prepare: withClientCredentials,
  },
  {
    name: 'POST /v1/oauth/token (refresh_token)',
    request: { method: 'POST', path: '/v1/oauth/token' },
    prepare: withRefreshTokens,
  },
];

const post = (baseUrl, path, body, token) => request(baseUrl, 'POST', path, body, token);

async function request(baseUrl, method, path, body, token) {
  const response = await fetch(baseUrl + path, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return response.json();
}
