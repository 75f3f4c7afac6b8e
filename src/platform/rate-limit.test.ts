import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../app.js';
import { client } from '../../test/client.js';
import {
  buildTestApp,
  createApiKey,
  createUser,
  deviceWithKey,
  login,
  openTestDatabase,
  openTestKeyValueStore,
  TEST_ADMIN,
  TEST_SYSTEM_KEY,
  type TestApp,
  testConfig,
  twoNodes,
  usesRedis,
} from '../../test/helpers.js';
import { DEFERRED_HITS_FLUSH_MS } from './rate-limit-counter.js';
import { RedisStore } from './kv/redis.js';
import type { KeyValueStore } from './kv/index.js';

// An hour-long window, so no test straddles a window boundary in practice. Headers on every
// counted response, so they can be checked from the first one (the default is below).
const LIMITS = {
  enabled: true,
  windowSecs: 3600,
  anonymous: 3,
  user: 4,
  apiKey: 5,
  gpsWrite: 2,
  headers: 'always' as const,
};

async function gpsProbe(app: FastifyInstance): Promise<void> {
  app.post('/v1/probe/gps', { config: { extraRateLimit: 'gpsWrite' } }, async () => ({ ok: true }));
}

let nextIp = 1;
const freshIp = () => `198.51.100.${nextIp++}`;
/** A post to the probe route (outside the OpenAPI document) from `ip`. */
const probe = (t: TestApp, ip: string) =>
  t.as(null).raw({ method: 'POST', url: '/v1/probe/gps', remoteAddress: ip, payload: {} });

describe('rate limiting', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ config: { rateLimit: LIMITS, internalToken: 'internal-secret' }, extraRoutes: gpsProbe });
  });
  afterAll(() => t.close());

  // Counts one node's database lookups (patched services): on two nodes the other node looks up too.
  it.skipIf(twoNodes)(
    'stops made-up tokens before they reach the database: unknown credentials count per IP',
    async () => {
      const { sessionStore, apiKeys } = t.app.services;
      const [lookupSession, lookupKey] = [sessionStore.lookup, apiKeys.lookup];
      let databaseLookups = 0;
      sessionStore.lookup = async (hash) => (databaseLookups++, lookupSession(hash));
      apiKeys.lookup = async (hash) => (databaseLookups++, lookupKey(hash));
      try {
        const ip = freshIp();
        const statuses = [];
        for (let i = 0; i < 6; i++)
          statuses.push(
            (await t.as(`wg_made_up_${i}_${Date.now()}`).get('/v1/gps/current', { remoteAddress: ip })).status,
          );
        expect(statuses).toEqual([401, 401, 401, 429, 429, 429]);
        expect(databaseLookups).toBe(LIMITS.anonymous);
        const refused = await t.as('ses_another_made_up_token').get('/v1/gps/current', { remoteAddress: ip });
        expect(refused.body).toEqual({
          error: 'TooManyRequests',
          message: 'Too many unknown credentials from this address; at most 3 per 3600 seconds',
          code: 'request.rate_limited',
        });
        expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
        // Another address is not affected, and X-Internal-Token skips the count as it skips the anonymous limit.
        expect((await t.as('wg_made_up_elsewhere').get('/v1/gps/current', { remoteAddress: freshIp() })).status).toBe(
          401,
        );
        expect(
          (
            await t
              .as('wg_made_up_internal')
              .get('/v1/gps/current', { remoteAddress: ip, headers: { 'x-internal-token': 'internal-secret' } })
          ).status,
        ).toBe(401);
      } finally {
        Object.assign(sessionStore, { lookup: lookupSession });
        Object.assign(apiKeys, { lookup: lookupKey });
      }
    },
  );

  it('counts anonymous requests per IP and answers 429 with the limit headers', async () => {
    const ip = freshIp();
    const windowEnd = (Math.floor(Date.now() / 1000 / 3600) + 1) * 3600;
    for (const remaining of ['2', '1', '0']) {
      const ok = await t.as(null).get('/v1', { remoteAddress: ip });
      expect(ok.status).toBe(200);
      expect(ok.headers['x-ratelimit-limit']).toBe('3');
      expect(ok.headers['x-ratelimit-remaining']).toBe(remaining);
      expect(ok.headers['x-ratelimit-reset']).toBe(String(windowEnd));
    }
    const limited = await t.as(null).get('/v1', { remoteAddress: ip });
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({
      error: 'TooManyRequests',
      message: 'Rate limit of 3 requests per 3600 seconds exceeded',
      code: 'request.rate_limited',
    });
    expect(limited.headers['x-ratelimit-limit']).toBe('3');
    expect(limited.headers['x-ratelimit-remaining']).toBe('0');
    expect(limited.headers['x-ratelimit-reset']).toBe(String(windowEnd));
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(Math.abs(Math.floor(Date.now() / 1000) + retryAfter - windowEnd)).toBeLessThanOrEqual(1);
    expect((await t.as(null).get('/v1', { remoteAddress: freshIp() })).status).toBe(200); // another IP has its own counter
  });

  // (/v1/ws without an upgrade answers 426: still never 429.)
  it.each([
    ['/health', 200],
    ['/v1/health', 200],
    ['/v1/openapi.json', 200],
    ['/v1/swagger-ui/', 200],
    ['/v1/schema', 200],
    ['/v1/ws', 426],
  ])('never limits %s', async (url, status) => {
    const ip = freshIp();
    for (let i = 0; i < 5; i++) {
      const response = await t.as(null).raw({ method: 'GET', url, remoteAddress: ip });
      expect(response.status).toBe(status);
      expect(response.headers['x-ratelimit-limit']).toBeUndefined();
    }
  });

  it('limits unknown routes too', async () => {
    const ip = freshIp();
    const nope = () => t.as(null).raw({ method: 'GET', url: '/v1/nope', remoteAddress: ip });
    for (let i = 0; i < 3; i++) expect((await nope()).status).toBe(404);
    expect((await nope()).status).toBe(429);
  });

  it('lets the configured X-Internal-Token skip the anonymous limit, and only that token', async () => {
    const ip = freshIp();
    for (let i = 0; i < 6; i++) {
      const response = await t
        .as(null)
        .get('/v1', { remoteAddress: ip, headers: { 'x-internal-token': 'internal-secret' } });
      expect(response.status).toBe(200);
      expect(response.headers['x-ratelimit-limit']).toBeUndefined();
    }
    const wrong = freshIp();
    const guess = () => t.as(null).get('/v1', { remoteAddress: wrong, headers: { 'x-internal-token': 'guess' } });
    for (let i = 0; i < 3; i++) await guess();
    expect((await guess()).status).toBe(429);
  });

  it('counts a signed-in user by user, not by IP, with the user limit', async () => {
    const user = await createUser(t.app);
    const roles = () => t.as(user.token).get(`/v1/users/${user.id}/roles`, { remoteAddress: freshIp() });
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await roles()).status);
    expect(statuses).toEqual([200, 200, 200, 200, 429]);
    const last = await roles();
    expect(last.headers['x-ratelimit-limit']).toBe('4');
  });

  it('counts an API key by key, with the API key limit', async () => {
    const admin = await login(t.app, 'admin', TEST_ADMIN.password);
    const { key } = await createApiKey(t.app, admin, { name: 'limited', scopes: ['roles:read'] });
    const statuses = [];
    for (let i = 0; i < 6; i++) statuses.push((await t.as(key).get('/v1/roles', { remoteAddress: freshIp() })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
  });

  it('never counts the system key (Limits: unlimited, never counted): no 429 and no limit headers past every limit', async () => {
    const ip = freshIp();
    const responses = [];
    for (let i = 0; i <= LIMITS.apiKey; i++) {
      responses.push(await t.as(TEST_SYSTEM_KEY).post('/v1/gql', { query: '{ __typename }' }, { remoteAddress: ip }));
    }
    expect(responses.map((response) => response.status)).toEqual(Array(LIMITS.apiKey + 1).fill(200));
    expect(responses.map((response) => response.headers['x-ratelimit-limit'])).toEqual(
      Array(LIMITS.apiKey + 1).fill(undefined),
    );
    // Nor did those requests count against the address they came from.
    expect((await t.as(null).get('/v1/roles', { remoteAddress: ip })).headers['x-ratelimit-remaining']).toBe(
      String(LIMITS.anonymous - 1),
    );
  });

  it('adds the stricter per-route limit and reports the tighter bucket', async () => {
    const ip = freshIp();
    const first = await probe(t, ip);
    expect(first.status).toBe(200);
    expect(first.headers['x-ratelimit-limit']).toBe('2');
    expect(first.headers['x-ratelimit-remaining']).toBe('1');
    await probe(t, ip);
    const third = await probe(t, ip);
    expect(third.status).toBe(429);
    expect(third.body.message).toBe('Rate limit of 2 requests per 3600 seconds exceeded');
  });
});

describe('tracker posts and credential lookups', () => {
  const ANONYMOUS = 20;
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    t = await buildTestApp({ config: { rateLimit: { ...LIMITS, anonymous: ANONYMOUS, user: 10_000, apiKey: 1200 } } });
    admin = await login(t.app, 'admin', TEST_ADMIN.password);
  });
  afterAll(() => t.close());

  /** A Traccar form post (outside the JSON the typed client sends) from `ip`. */
  const formPost = (ip: string, payload: string) =>
    t.as(null).raw({
      method: 'POST',
      url: '/v1/ingest/osmand',
      remoteAddress: ip,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload,
    });

  it('counts a Traccar form post against the key in its body, not its address: 150 from one address are stored and the console keeps its anonymous budget', async () => {
    const { key, deviceId } = await deviceWithKey(t.app, admin, { name: 'household phone' });
    const ip = freshIp();
    const statuses = [];
    for (let i = 0; i < 150; i++) {
      const point = `lat=52.52&lon=13.40&timestamp=${1_760_000_000 + i}`;
      // As Traccar Client 10.x sends it (id= in the form body), and a few as the classic apps do (id= in the query).
      const response =
        i % 15 === 0
          ? await t.as(null).post(`/v1/ingest/osmand?id=${key}&${point}`, undefined, { remoteAddress: ip })
          : await formPost(ip, `id=${key}&${point}`);
      statuses.push(response.status);
    }
    expect(statuses).toEqual(Array(150).fill(200));
    const stored = await t.database.db
      .selectFrom('gps_points')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('device_id', '=', deviceId)
      .executeTakeFirstOrThrow();
    expect(Number(stored.n)).toBe(150);
    // A post without a valid key still counts against its address (before its 401), as the console's requests do.
    expect((await formPost(ip, 'id=48241179&lat=1&lon=1')).status).toBe(401);
    const console = [];
    for (let i = 0; i < ANONYMOUS; i++) console.push((await t.as(null).get('/v1', { remoteAddress: ip })).status);
    expect(console).toEqual([...Array(ANONYMOUS - 1).fill(200), 429]);
    // With the address's budget spent, a post without a key is refused 429, one with its key is still stored.
    expect((await formPost(ip, 'lat=1&lon=1')).status).toBe(429);
    expect((await formPost(ip, `id=${key}&lat=1&lon=1&timestamp=1760001000`)).status).toBe(200);
  });

  it("answers the console page past its address's limit with a page a person reads (in German when asked first), the API still with JSON", async () => {
    const ip = freshIp();
    for (let i = 0; i < ANONYMOUS; i++) await t.as(null).get('/v1', { remoteAddress: ip });
    const page = await t.as(null).raw({
      method: 'GET',
      url: '/console/',
      remoteAddress: ip,
      headers: { accept: 'text/html', 'accept-language': 'en-GB,en;q=0.9' },
    });
    const seconds = page.headers['retry-after'];
    expect([page.status, page.headers['content-type']]).toEqual([429, 'text/html; charset=utf-8']);
    expect(Number(seconds)).toBeGreaterThan(0);
    expect(page.text).toContain(`<html lang="en">`);
    expect(page.text).toContain(`<p role="alert">Too many requests — try again in ${seconds} seconds.</p>`);
    const german = await t.as(null).raw({
      method: 'GET',
      url: '/console/',
      remoteAddress: ip,
      headers: { 'accept-language': 'de-DE,de;q=0.9,en;q=0.8' },
    });
    expect(german.text).toContain(`<html lang="de">`);
    expect(german.text).toContain(
      `<p role="alert">Zu viele Anfragen – bitte versuchen Sie es in ${german.headers['retry-after']} Sekunden erneut.</p>`,
    );
    const api = await t.as(null).get('/v1', { remoteAddress: ip }).expect(429);
    expect(api.body.code).toBe('request.rate_limited');
  });

  // Counts one node's database lookups (patched service): on two nodes the other node looks up too.
  it.skipIf(twoNodes)(
    'counts only credentials not found as unknown: 100 valid keys no cache knows yet pass from one address, made-up ones are still stopped',
    async () => {
      const keys = [];
      for (let i = 0; i < 100; i++)
        keys.push((await createApiKey(t.app, admin, { name: `restart ${i}`, scopes: ['roles:read'] })).key);
      const { apiKeys } = t.app.services;
      const lookupKey = apiKeys.lookup;
      let databaseLookups = 0;
      apiKeys.lookup = async (hash) => (databaseLookups++, lookupKey(hash));
      try {
        const ip = freshIp();
        const statuses = [];
        for (const key of keys) statuses.push((await t.as(key).get('/v1/roles', { remoteAddress: ip })).status);
        expect(statuses).toEqual(Array(100).fill(200));
        expect(databaseLookups).toBe(100);
        const madeUp = [];
        for (let i = 0; i <= ANONYMOUS; i++)
          madeUp.push((await t.as(`wg_made_up_${i}_${Date.now()}`).get('/v1/roles', { remoteAddress: ip })).status);
        expect(madeUp).toEqual([...Array(ANONYMOUS).fill(401), 429]);
      } finally {
        Object.assign(apiKeys, { lookup: lookupKey });
      }
    },
  );
});

describe('rate limit headers by default (near the limit)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({
      config: { rateLimit: { ...LIMITS, headers: 'near-limit', anonymous: 10, gpsWrite: 5 } },
      extraRoutes: gpsProbe,
    });
  });
  afterAll(() => t.close());

  const limitHeaders = (response: { headers: Record<string, unknown> }) =>
    [response.headers['x-ratelimit-limit'], response.headers['x-ratelimit-remaining']].join('/');

  // Exact X-RateLimit-* below and around half the bucket: each node defers its hits below half up to 50 ms (rate-limit-counter.ts), so the headers
  // of two nodes start from counts that differ by what the other has not yet sent; from half used on (and the limit itself) they are exact.
  it.skipIf(twoNodes)(
    'sends them on successful responses once the bucket is half used, and always with 429',
    async () => {
      const ip = '203.0.113.50';
      const seen = [];
      for (let i = 0; i < 11; i++) {
        const response = await t.as(null).get('/v1', { remoteAddress: ip });
        seen.push(`${response.status} ${limitHeaders(response)}`);
      }
      expect(seen).toEqual([
        '200 /',
        '200 /',
        '200 /',
        '200 /',
        '200 10/5',
        '200 10/4',
        '200 10/3',
        '200 10/2',
        '200 10/1',
        '200 10/0',
        '429 10/0',
      ]);
    },
  );

  // Exact X-RateLimit-* below and around half the bucket: each node defers its hits below half up to 50 ms (rate-limit-counter.ts), so the headers
  // of two nodes start from counts that differ by what the other has not yet sent; from half used on (and the limit itself) they are exact.
  it.skipIf(twoNodes)('describes the tightest bucket once any bucket is half used', async () => {
    const ip = '203.0.113.51';
    for (let i = 0; i < 4; i++) await t.as(null).get('/v1', { remoteAddress: ip });
    const seen = [];
    for (let i = 0; i < 4; i++) {
      // The identity bucket (10) is half used from here on; the probe's own bucket (5) has fewer left.
      const response = await probe(t, ip);
      seen.push(`${response.status} ${limitHeaders(response)}`);
    }
    expect(seen).toEqual(['200 5/4', '200 5/3', '200 5/2', '200 5/1']);
    // A fresh caller: neither bucket half used after one write, so no headers.
    const fresh = await probe(t, '203.0.113.52');
    expect(limitHeaders(fresh)).toBe('/');
  });
});

describe('rate limiting switched off', () => {
  it('sends no headers and never answers 429', async () => {
    const t = await buildTestApp({ config: { rateLimit: { ...LIMITS, enabled: false } } });
    try {
      for (let i = 0; i < 5; i++) {
        const response = await t.as(null).get('/v1', { remoteAddress: '203.0.113.9' });
        expect(response.status).toBe(200);
        expect(response.headers['x-ratelimit-limit']).toBeUndefined();
      }
    } finally {
      await t.close();
    }
  });
});

describe.runIf(usesRedis)('counting in Redis without a round trip per request', () => {
  const limits = { ...LIMITS, anonymous: 40 };
  let kv: KeyValueStore;
  let nodes: FastifyInstance[];
  let storeHits = 0;
  let close: () => Promise<void>;
  beforeAll(async () => {
    const [database, store] = await Promise.all([openTestDatabase(), openTestKeyValueStore()]);
    // The store, with its hit counts counted.
    kv = new Proxy(store, {
      get(target, property) {
        if (property === 'hitWindow')
          return (...args: Parameters<KeyValueStore['hitWindow']>) => (storeHits++, target.hitWindow(...args));
        const value: unknown = Reflect.get(target, property, target);
        // Bound to the store itself: its methods use private fields, which a proxy does not have.
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    // One after the other: both bootstrap the same admin.
    nodes = [];
    for (let i = 0; i < 2; i++)
      nodes.push(await buildApp(testConfig({ rateLimit: limits }), { database, kv }, { logger: false }));
    close = async () => {
      await Promise.all(nodes.map((node) => node.close()));
      await store.close();
      await database.close();
    };
  });
  afterAll(() => close());
  const pause = () => new Promise((resolve) => setTimeout(resolve, DEFERRED_HITS_FLUSH_MS * 3));

  it('asks the store once per batch while a bucket is far from its limit', async () => {
    const before = storeHits;
    for (let i = 0; i < 10; i++)
      expect((await client(nodes[0]!).get('/v1', { remoteAddress: '203.0.113.10' })).status).toBe(200);
    expect(storeHits - before).toBeLessThan(5);
  });

  it('is exact at the limit across two nodes: the 41st request in the window is refused, on either node', async () => {
    const answers: number[] = [];
    for (let i = 0; i < 44; i++) {
      answers.push((await client(nodes[i % 2]!).get('/v1', { remoteAddress: '203.0.113.20' })).status);
      // Deferred hits reach the store within the flush interval; requests of one client that far apart
      // are counted exactly (a burst across nodes faster than that may slip a few through below half).
      if (i % 10 === 9) await pause();
    }
    expect(answers.filter((status) => status === 200)).toHaveLength(40);
    expect(answers.slice(40)).toEqual([429, 429, 429, 429]);
  });
});

describe.runIf(usesRedis)('when Redis stops', () => {
  let redis: ChildProcess;
  let kv: KeyValueStore;
  let app: FastifyInstance;
  let close: () => Promise<void>;

  beforeAll(async () => {
    const port = await freePort();
    redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    const store = new RedisStore({ url: `redis://127.0.0.1:${port}` });
    await retry(() => store.connect());
    kv = store;
    const database = await openTestDatabase();
    app = await buildApp(testConfig({ rateLimit: LIMITS }), { database, kv }, { logger: false });
    close = async () => {
      await app.close();
      await kv.close();
      await database.close();
    };
  });
  afterAll(async () => {
    await close();
    redis.kill('SIGKILL');
  });

  it('lets requests through (fail-open) and still resolves credentials from the database', async () => {
    const token = await login(app, 'admin', TEST_ADMIN.password);
    const before = await client(app, token).get('/v1/roles');
    expect(before.headers['x-ratelimit-limit']).toBe('4'); // the user limit of LIMITS

    redis.kill('SIGKILL');
    await new Promise((resolve) => redis.once('exit', resolve));

    for (let i = 0; i < 6; i++) {
      const anonymous = await client(app).get('/v1', { remoteAddress: '192.0.2.77' });
      expect(anonymous.status).toBe(200);
      expect(anonymous.headers['x-ratelimit-limit']).toBeUndefined();
    }
    const signedIn = await login(app, 'admin', TEST_ADMIN.password);
    expect((await client(app, signedIn).get('/v1/roles')).status).toBe(200);
    const health = await client(app).get('/health');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({
      status: 'degraded',
      services: { cache: { status: 'down' }, database: { status: 'up' } },
    });
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
    server.on('error', reject);
  });
}

async function retry(attempt: () => Promise<void>, tries = 50): Promise<void> {
  for (let i = 1; ; i++) {
    try {
      return await attempt();
    } catch (error) {
      if (i >= tries) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
