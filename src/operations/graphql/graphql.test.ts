import { buildClientSchema, getIntrospectionQuery, printSchema, type IntrospectionQuery } from 'graphql';
import { GraphQLClient } from 'graphql-request';
import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../app.js';
import {
  bearer,
  countingStatements,
  createApiKey,
  createUser,
  forbidden,
  login,
  openTestDatabase,
  openTestKeyValueStore,
  TEST_ADMIN,
  TEST_SYSTEM_KEY,
  testConfig,
  UNKNOWN_ID,
} from '../../../test/helpers.js';
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../platform/db/database.js';
import type { KeyValueStore } from '../../platform/kv/index.js';
import { MAX_QUERY_COST, MAX_QUERY_DEPTH, MAX_ROOT_FIELDS } from './routes.js';

/** Counts the SQL statements the app runs (to prove list queries are batched). */
let statements: () => number;

let app: FastifyInstance;
let database: Database;
let kv: KeyValueStore;
let url: string;
let admin: string;
beforeAll(async () => {
  [database, kv] = await Promise.all([openTestDatabase(), openTestKeyValueStore()]);
  const counted = countingStatements(database);
  statements = counted.count;
  app = await buildApp(testConfig(), { database: counted.database, kv }, { logger: false });
  url = `${await app.listen({ host: '127.0.0.1', port: 0 })}/v1/gql`;
  admin = await login(app, 'admin', TEST_ADMIN.password);
});
afterAll(async () => {
  await app.close();
  await Promise.all([kv.close(), database.close()]);
});

/** A GraphQL client library, as an app would use it; errors come back beside the data. */
const client = (token?: string, headers: Record<string, string> = {}) =>
  new GraphQLClient(url, { headers: { ...(token ? bearer(token) : {}), ...headers }, errorPolicy: 'all' });
const run = (token: string | undefined, query: string, variables?: Record<string, unknown>) =>
  client(token).rawRequest<Record<string, unknown>>(query, variables);
/** A plain POST, for answers a client library would turn into an exception (non-200). */
const post = (query: string, token?: string) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? bearer(token) : {}) },
    body: JSON.stringify({ query }),
  });
const codesOf = (result: { errors?: { extensions?: Record<string, unknown> }[] }) =>
  result.errors?.map((error) => error.extensions?.code);

describe('me', () => {
  it('answers who the credential is, in camelCase; anonymous callers get auth.unauthorized', async () => {
    const user = await createUser(app);
    const { data } = await run(user.token, '{ me { userId apiKeyId roles permissions isSuperAdmin } }');
    expect(data).toEqual({
      me: {
        userId: user.id,
        apiKeyId: null,
        roles: ['role_user'],
        permissions: expect.any(Array),
        isSuperAdmin: false,
      },
    });

    const anonymous = await run(undefined, '{ me { userId } }');
    expect(anonymous.data).toBeNull();
    expect(anonymous.errors).toEqual([
      {
        message: 'Invalid or missing authentication token',
        locations: [{ line: 1, column: 3 }],
        path: ['me'],
        extensions: { code: 'auth.unauthorized', status: 401 },
      },
    ]);
  });
});

describe('permission gates match the REST routes', () => {
  it('needs the permission of the REST route; the system key only reaches the resolvers the allowlist means', async () => {
    const device = (
      await app.inject({ method: 'POST', url: '/v1/devices', headers: bearer(admin), payload: { name: 'Kutter' } })
    ).json().data;
    const query = 'query ($id: ID!) { device(id: $id) { id name isActive createdAt } }';
    const reader = (await createApiKey(app, admin, { name: 'gql reader', scopes: ['devices:read'] })).key;
    expect((await run(reader, query, { id: device.id })).data).toEqual({
      device: { id: device.id, name: 'Kutter', isActive: true, createdAt: device.created_at },
    });

    // A registered user reaches their own devices only (docs/sharing.md), as on REST: another's is not there.
    const plainUser = await createUser(app);
    expect(codesOf(await run(plainUser.token, query, { id: device.id }))).toEqual(['device.not_found']);
    const tripsOnly = (await createApiKey(app, admin, { name: 'gql trips', scopes: ['trips:read'] })).key;
    expect(codesOf(await run(tripsOnly, query, { id: device.id }))).toEqual(['auth.forbidden']);
    expect(codesOf(await run(TEST_SYSTEM_KEY, query, { id: device.id }))).toEqual(['auth.system_key_not_permitted']);
    expect(codesOf(await run(reader, query, { id: UNKNOWN_ID }))).toEqual(['device.not_found']);
    expect(codesOf(await run(reader, query, { id: 'not-a-uuid' }))).toEqual(['request.validation']);
  });

  it('shows a trip reader the device only with devices:read, and its position only with gps:read', async () => {
    const device = (
      await app.inject({ method: 'POST', url: '/v1/devices', headers: bearer(admin), payload: { name: 'Jolle' } })
    ).json().data;
    await app.inject({
      method: 'POST',
      url: '/v1/trips',
      headers: bearer(admin),
      payload: { name: 'Nested', device_id: device.id },
    });
    const tripReader = (await createApiKey(app, admin, { name: 'trips only', scopes: ['trips:read'] })).key;
    const deviceReader = (await createApiKey(app, admin, { name: 'devices only', scopes: ['devices:read'] })).key;
    expect(codesOf(await run(tripReader, '{ trips(limit: 1) { data { device { id } } } }'))).toEqual([
      'auth.forbidden',
    ]);
    expect(codesOf(await run(deviceReader, `{ device(id: "${device.id}") { latestPosition { id } } }`))).toEqual([
      'auth.forbidden',
    ]);
    expect(codesOf(await run(deviceReader, `{ device(id: "${device.id}") { name } }`))).toBeUndefined();
  });

  it('lets only the system key sign in a social identity', async () => {
    const mutation =
      'mutation ($input: OAuthSignInInput!) { oauthSignin(input: $input) { user { id username email platform } message } }';
    const input = {
      email: 'skipper@example.org',
      name: 'Skipper Jo',
      oauthProvider: 'discord',
      oauthProviderId: '80351110224678912',
    };
    expect(codesOf(await run(admin, mutation, { input }))).toEqual(['oauth_sign_in.system_key_only']);
    expect(codesOf(await run(undefined, mutation, { input }))).toEqual(['auth.unauthorized']);
    expect(
      (
        await app.inject({
          method: 'PATCH',
          url: '/v1/platforms/discord/enabled',
          headers: bearer(admin),
          payload: { enabled: true },
        })
      ).statusCode,
    ).toBe(200);
    const result = await run(TEST_SYSTEM_KEY, mutation, { input });
    expect(codesOf(result)).toBeUndefined();
    expect(result.data).toEqual({
      oauthSignin: {
        user: {
          id: expect.any(String),
          username: expect.any(String),
          email: 'skipper@example.org',
          platform: 'discord',
        },
        message: 'Signed in',
      },
    });
    expect(codesOf(await run(TEST_SYSTEM_KEY, mutation, { input: { ...input, name: 'x'.repeat(201) } }))).toEqual([
      'request.validation',
    ]);
  });

  it('logs audit events for the system key or audit:write only', async () => {
    const mutation =
      'mutation ($input: AuditEventInput!) { logAuditEvent(input: $input) { id eventType sourceService metadata } }';
    const input = {
      eventType: 'bot_command_executed',
      sourceService: 'community_bot',
      userId: '80351110224678912',
      metadata: { command: '/track' },
    };
    const logged = await run(TEST_SYSTEM_KEY, mutation, { input });
    expect(logged.data).toEqual({
      logAuditEvent: {
        id: expect.any(String),
        eventType: 'bot_command_executed',
        sourceService: 'community_bot',
        metadata: { command: '/track' },
      },
    });
    const user = await createUser(app);
    expect(codesOf(await run(user.token, mutation, { input }))).toEqual(['auth.forbidden']);
    expect(codesOf(await run(undefined, mutation, { input }))).toEqual(['auth.unauthorized']);
  });

  it('mints a WebSocket ticket for a session, not for an API key', async () => {
    const user = await createUser(app);
    expect((await run(user.token, 'mutation { mintWsTicket { ticket expiresIn } }')).data).toEqual({
      mintWsTicket: { ticket: expect.stringMatching(/^wst_/), expiresIn: 30 },
    });
    const key = (await createApiKey(app, admin, { name: 'no tickets', scopes: ['gps:read'] })).key;
    expect(codesOf(await run(key, 'mutation { mintWsTicket { ticket } }'))).toEqual(['ws.user_context_required']);
  });

  it('deletes a GPS point with gps:delete, and refuses one of a trip as REST does', async () => {
    const point = {
      latitude: 1,
      longitude: 2,
      timestamp: 1_767_225_600,
      speed_kmh: 0,
      speed_mps: 0,
      speed_mph: 0,
      speed_knots: 0,
    };
    const { id } = (await app.inject({ method: 'POST', url: '/v1/gps', headers: bearer(admin), payload: point })).json()
      .data;
    const mutation = 'mutation ($id: ID!) { deleteGpsData(id: $id) }';
    const user = await createUser(app);
    expect(codesOf(await run(user.token, mutation, { id }))).toEqual(['gps.point_not_found']);
    const reader = (await createApiKey(app, admin, { name: 'gql gps reader', scopes: ['gps:read'] })).key;
    expect(codesOf(await run(reader, mutation, { id }))).toEqual(['auth.forbidden']);
    expect((await run(admin, mutation, { id })).data).toEqual({ deleteGpsData: true });
    expect(codesOf(await run(admin, mutation, { id }))).toEqual(['gps.point_not_found']);
  });

  it('updates a device with devices:write (isPublic, color and icon among its fields), checked against the REST body schema', async () => {
    const { id } = (
      await app.inject({ method: 'POST', url: '/v1/devices', headers: bearer(admin), payload: { name: 'Jolle' } })
    ).json().data;
    const mutation =
      'mutation ($id: ID!, $input: UpdateDeviceInput!) { updateDevice(id: $id, input: $input) { id name isPublic } }';
    const reader = (await createApiKey(app, admin, { name: 'gql device reader', scopes: ['devices:read'] })).key;
    expect(codesOf(await run(reader, mutation, { id, input: { isPublic: true } }))).toEqual(['auth.forbidden']);
    expect((await run(admin, mutation, { id, input: { isPublic: true } })).data).toEqual({
      updateDevice: { id, name: 'Jolle', isPublic: true },
    });
    expect(codesOf(await run(admin, mutation, { id, input: {} }))).toEqual(['request.validation']);
    const drawn =
      'mutation ($id: ID!, $input: UpdateDeviceInput!) { updateDevice(id: $id, input: $input) { color icon } }';
    expect((await run(admin, drawn, { id, input: { color: '#1F6FEB', icon: 'boat' } })).data).toEqual({
      updateDevice: { color: '#1f6feb', icon: 'boat' },
    });
    expect(codesOf(await run(admin, drawn, { id, input: { icon: 'tractor' } }))).toEqual(['request.validation']);
  });
});

describe('sign-in and sign-out', () => {
  it('finishes a 2FA sign-in with verifyTwoFactorLogin, and logout ends every session of the user', async () => {
    const user = await createUser(app);
    const secret = (
      await app.inject({ method: 'POST', url: '/v1/users/me/2fa/setup', headers: bearer(user.token), payload: {} })
    ).json().secret as string;
    const code = () => generate({ secret, epoch: Math.floor(Date.now() / 1000) });
    expect(
      (
        await app.inject({
          method: 'POST',
          url: '/v1/users/me/2fa/verify',
          headers: bearer(user.token),
          payload: { code: await code() },
        })
      ).statusCode,
    ).toBe(200);
    const signIn = await app.inject({
      method: 'POST',
      url: '/v1/auth/login',
      payload: { identifier: user.username, password: user.password },
    });
    const tempToken = signIn.json().temp_token as string;

    const mutation =
      'mutation ($input: VerifyTwoFactorLoginInput!) { verifyTwoFactorLogin(input: $input) { userId email username sessionToken sessionId expiresAt provider preferredLocale } }';
    expect(codesOf(await run(TEST_SYSTEM_KEY, mutation, { input: { tempToken, code: '000000' } }))).toEqual([
      'auth.system_key_not_permitted',
    ]);
    expect(codesOf(await run(undefined, mutation, { input: { tempToken, code: '000000' } }))).toEqual([
      'two_factor.wrong_sign_in_code',
    ]);
    expect(codesOf(await run(undefined, mutation, { input: { tempToken: '', code: '000000' } }))).toEqual([
      'request.validation',
    ]);
    // A code of the next step: the one just used to enable 2FA cannot be used twice.
    const next = await generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 });
    const verified = await run(undefined, mutation, { input: { tempToken, code: next } });
    expect(verified.errors).toBeUndefined();
    expect(verified.data).toEqual({
      verifyTwoFactorLogin: {
        userId: user.id,
        email: `${user.username}@example.org`,
        username: user.username,
        sessionToken: expect.stringMatching(/^ses_/),
        sessionId: expect.any(String),
        expiresAt: expect.any(String),
        provider: 'email',
        preferredLocale: expect.any(String),
      },
    });
    const session = (verified.data as { verifyTwoFactorLogin: { sessionToken: string } }).verifyTwoFactorLogin
      .sessionToken;

    const key = (await createApiKey(app, admin, { name: 'cannot log out', scopes: [] })).key;
    expect(codesOf(await run(key, 'mutation { logout }'))).toEqual(['auth.forbidden']);
    expect((await run(session, 'mutation { logout }')).data).toEqual({ logout: true });
    for (const token of [session, user.token])
      expect((await app.inject({ method: 'GET', url: '/v1/users/me', headers: bearer(token) })).statusCode).toBe(401);
  });

  it('logoutEverywhere and logoutApp answer true for a user, and a key with connected_apps:sign_out; refuse the system key', async () => {
    const user = await createUser(app);
    expect((await run(user.token, 'mutation { logoutEverywhere(reason: "lost_phone") }')).data).toEqual({
      logoutEverywhere: true,
    });
    expect((await run(user.token, `mutation { logoutApp(clientId: "${UNKNOWN_ID}") }`)).data).toEqual({
      logoutApp: true,
    });
    expect(codesOf(await run(TEST_SYSTEM_KEY, 'mutation { logoutEverywhere }'))).toEqual([
      'auth.system_key_not_permitted',
    ]);
    // As on REST: a key acts on its owner's account only with the permission (a device key signs nobody out).
    const scopeless = (await createApiKey(app, admin, { name: 'device', scopes: [] })).key;
    const signOut = (await createApiKey(app, admin, { name: 'panic button', scopes: ['connected_apps:sign_out'] })).key;
    for (const mutation of ['mutation { logoutEverywhere }', `mutation { logoutApp(clientId: "${UNKNOWN_ID}") }`]) {
      const refused = await run(scopeless, mutation);
      expect(refused.errors?.map((error) => [error.message, error.extensions?.code])).toEqual([
        [forbidden('connected_apps:sign_out').message, 'auth.forbidden'],
      ]);
      expect((await run(signOut, mutation)).errors).toBeUndefined();
    }
    expect(codesOf(await run(scopeless, '{ myIntegrations { id } }'))).toEqual(['auth.forbidden']);
  });
});

describe('tracking queries', () => {
  it('lists trips with their devices and points in a bounded number of SQL statements, whatever the page size', async () => {
    const device = (
      await app.inject({ method: 'POST', url: '/v1/devices', headers: bearer(admin), payload: { name: 'Ewer' } })
    ).json().data;
    for (let i = 0; i < 12; i++) {
      const trip = (
        await app.inject({
          method: 'POST',
          url: '/v1/trips',
          headers: bearer(admin),
          payload: { name: `Run ${i}`, device_id: device.id },
        })
      ).json().data;
      await database.db
        .insertInto('gps_points')
        .values(
          [1, 2, 3].map((n) => ({
            trip_id: trip.id,
            device_id: device.id,
            latitude: 50 + n + i / 100,
            longitude: 8,
            timestamp: new Date(1_767_225_600_000 + n * 1000),
            speed_kmh: 1,
            speed_mps: 1,
            speed_mph: 1,
            speed_knots: 1,
          })),
        )
        .execute();
    }
    const query =
      'query ($limit: Int!) { trips(limit: $limit) { pagination { total } data { name device { name } points(limit: 2) { latitude tripId } } } }';
    const countFor = async (limit: number) => {
      const before = statements();
      const result = await run(admin, query, { limit });
      expect(result.errors).toBeUndefined();
      return {
        statements: statements() - before,
        trips: (result.data as { trips: { data: { device: unknown; points: unknown[] }[] } }).trips.data,
      };
    };
    const small = await countFor(2);
    const large = await countFor(12);
    expect(large.trips).toHaveLength(12);
    expect(
      large.trips.every((trip) => (trip.device as { name: string }).name === 'Ewer' && trip.points.length === 2),
    ).toBe(true);
    // The page, its total, the devices, the points: the same few statements for 2 trips as for 12.
    expect(large.statements).toBe(small.statements);
    expect(large.statements).toBeLessThanOrEqual(4);
  });

  it('walks GPS points by cursor: each point once, in the order REST lists them, pages numbered on', async () => {
    for (const timestamp of [1_767_225_600, 1_767_225_600, 1_767_225_660]) {
      const posted = await app.inject({
        method: 'POST',
        url: '/v1/gps',
        headers: bearer(admin),
        payload: {
          latitude: 54.3,
          longitude: 10.1,
          timestamp,
          speed_kmh: 1,
          speed_mps: 1,
          speed_mph: 1,
          speed_knots: 1,
        },
      });
      expect(posted.statusCode).toBe(201);
    }
    const listed = (await app.inject({ method: 'GET', url: '/v1/gps?limit=100', headers: bearer(admin) })).json();
    expect(listed.pagination.total_pages).toBe(1);
    const query =
      'query ($after: String) { gpsPoints(limit: 2, after: $after) { data { id } pagination { page total } totalEstimated next } }';
    type Page = {
      data: { id: string }[];
      pagination: { page: number; total: number };
      totalEstimated: boolean;
      next: string | null;
    };
    const pages: Page[] = [];
    for (let after: string | null = null; pages.length === 0 || after;) {
      const result = await run(admin, query, { after });
      expect(result.errors).toBeUndefined();
      const page = (result.data as { gpsPoints: Page }).gpsPoints;
      pages.push(page);
      after = page.next;
    }
    expect(pages.flatMap((page) => page.data.map((point) => point.id))).toEqual(
      listed.data.map((point: { id: string }) => point.id),
    );
    expect(pages.map((page) => page.pagination.page)).toEqual(pages.map((_, i) => i + 1));
    expect(
      pages.every((page) => page.pagination.total === listed.pagination.total && page.totalEstimated === false),
    ).toBe(true);
  });

  it("walks a trip's points by cursor as GET /v1/trips/{id}/gps lists them, with the trip's exact total", async () => {
    const device = (
      await app.inject({ method: 'POST', url: '/v1/devices', headers: bearer(admin), payload: { name: 'Logger' } })
    ).json().data;
    const trip = (
      await app.inject({
        method: 'POST',
        url: '/v1/trips',
        headers: bearer(admin),
        payload: { name: 'Paged', device_id: device.id },
      })
    ).json().data;
    // Two points share a time (at two places), so the order needs its id tie-break.
    await database.db
      .insertInto('gps_points')
      .values(
        [0, 0, 1, 2, 3].map((n, i) => ({
          trip_id: trip.id,
          device_id: device.id,
          latitude: 50 + n,
          longitude: 8 + i / 1000,
          timestamp: new Date(1_767_225_600_000 + n * 1000),
          speed_kmh: 1,
          speed_mps: 1,
          speed_mph: 1,
          speed_knots: 1,
        })),
      )
      .execute();
    const listed = (
      await app.inject({ method: 'GET', url: `/v1/trips/${trip.id}/gps?limit=100`, headers: bearer(admin) })
    ).json();
    expect(listed.data).toHaveLength(5);

    const reader = (await createApiKey(app, admin, { name: 'trip points', scopes: ['trips:read'] })).key;
    const query =
      'query ($trip: ID!, $after: String) { tripPoints(tripId: $trip, limit: 2, after: $after) { data { id } pagination { page total totalPages } totalEstimated next } }';
    type Page = {
      data: { id: string }[];
      pagination: { page: number; total: number; totalPages: number };
      totalEstimated: boolean;
      next: string | null;
    };
    const pages: Page[] = [];
    // The trip named in capitals on every page after the first: the cursor is the same list's.
    for (let after: string | null = null; pages.length === 0 || after;) {
      const result = await run(reader, query, { trip: after ? trip.id.toUpperCase() : trip.id, after });
      expect(result.errors).toBeUndefined();
      const page = (result.data as { tripPoints: Page }).tripPoints;
      pages.push(page);
      after = page.next;
    }
    expect(pages.flatMap((page) => page.data.map((point) => point.id))).toEqual(
      listed.data.map((point: { id: string }) => point.id),
    );
    expect(pages.map((page) => page.pagination)).toEqual([1, 2, 3].map((page) => ({ page, total: 5, totalPages: 3 })));
    expect(pages.every((page) => page.totalEstimated === false)).toBe(true);

    const gpsOnly = (await createApiKey(app, admin, { name: 'gps only', scopes: ['gps:read'] })).key;
    expect(codesOf(await run(gpsOnly, query, { trip: trip.id }))).toEqual(['auth.forbidden']);
    expect(codesOf(await run(reader, query, { trip: UNKNOWN_ID }))).toEqual(['trip.not_found']);
    const otherTrip = (
      await app.inject({
        method: 'POST',
        url: '/v1/trips',
        headers: bearer(admin),
        payload: { name: 'Other', device_id: device.id },
      })
    ).json().data;
    expect(codesOf(await run(reader, query, { trip: otherTrip.id, after: pages[0]!.next }))).toEqual([
      'request.validation',
    ]);
  });

  it('refuses page with after, and a cursor of another list, naming the argument', async () => {
    const query = 'query ($page: Int, $after: String) { gpsPoints(page: $page, after: $after) { data { id } } }';
    const ofTrip = Buffer.from(JSON.stringify([`trip:${UNKNOWN_ID}`, 0, UNKNOWN_ID, 1])).toString('base64url');
    const ofGps = Buffer.from(JSON.stringify(['gps', 0, UNKNOWN_ID, 1])).toString('base64url');
    const both = await run(admin, query, { page: 1, after: ofGps });
    expect(both.errors?.map((error) => [error.message, error.extensions?.code])).toEqual([
      ["Argument 'after' cannot be combined with 'page'", 'request.validation'],
    ]);
    const foreign = await run(admin, query, { after: ofTrip });
    expect(foreign.errors?.map((error) => [error.message, error.extensions?.code])).toEqual([
      ["Argument 'after' is not a valid cursor; take it from a page's next link", 'request.validation'],
    ]);
  });

  it('pages like REST, at most 100 per page', async () => {
    const response = await post('{ gpsPoints(limit: 101) { data { id } } }', admin);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      data: null,
      errors: [
        {
          message: "Argument 'limit' must be between 1 and 100",
          extensions: { code: 'request.validation', status: 400 },
        },
      ],
    });
    expect((await run(admin, '{ locations { pagination { page limit } } }')).data).toEqual({
      locations: { pagination: { page: 1, limit: 10 } },
    });
  });
});

describe('account queries', () => {
  it('lists your sessions with the browser and system REST shows', async () => {
    const { data, errors } = await run(admin, '{ mySessions { id browser os deviceType provider isCurrent } }');
    expect(errors).toBeUndefined();
    const sessions = (data as { mySessions: { browser: string; os: string; isCurrent: boolean }[] }).mySessions;
    expect(sessions.some((session) => session.isCurrent)).toBe(true);
    for (const session of sessions)
      expect(session).toMatchObject({ browser: expect.any(String), os: expect.any(String) });
  });

  it('lists API keys with their prefix', async () => {
    const key = await createApiKey(app, admin, { name: 'listed', scopes: ['gps:read'] });
    const { data, errors } = await run(admin, '{ apiKeys { id prefix } }');
    expect(errors).toBeUndefined();
    const listed = (data as { apiKeys: { id: string; prefix: string | null }[] }).apiKeys;
    expect(listed.find((entry) => entry.id === key.id)?.prefix).toBe(key.key.slice(0, 11));
  });
});

describe('abusive queries', () => {
  it(`refuses queries nested deeper than ${MAX_QUERY_DEPTH} levels with 400 graphql.too_deep`, async () => {
    // Inline fragments on the same type nest without end; each is a level.
    const deep = `{ me { ${'... on Me { '.repeat(MAX_QUERY_DEPTH)}userId${' }'.repeat(MAX_QUERY_DEPTH)} } }`;
    const response = await post(deep);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      data: null,
      errors: [
        {
          message: `Query nests deeper than ${MAX_QUERY_DEPTH} levels`,
          extensions: { code: 'graphql.too_deep', status: 400 },
        },
      ],
    });
  });

  it(`refuses queries costing more than ${MAX_QUERY_COST} with graphql.too_costly`, async () => {
    const response = await post(
      '{ trips(limit: 100) { data { name points(limit: 100) { latitude longitude } } } }',
      admin,
    );
    expect(response.status).toBe(400);
    const body = (await response.json()) as { data: unknown; errors: { message: string; extensions: unknown }[] };
    expect(body.data).toBeNull();
    expect(body.errors).toEqual([
      {
        message: expect.stringMatching(/^Query costs \d+, more than the 2000 allowed/),
        extensions: { code: 'graphql.too_costly', status: 400 },
      },
    ]);
  });

  it('refuses a limit outside 1..100 before anything runs, so a negative one cannot lower the total', async () => {
    const sneaky = `{ neg: gpsPoints(limit: -100000) { data { id } } ${Array.from({ length: 15 }, (_, i) => `a${i}: latestPositions { id }`).join(' ')} }`;
    expect(
      ((await (await post(sneaky, admin)).json()) as { errors: { extensions: { code: string } }[] }).errors[0]!
        .extensions.code,
    ).toBe('request.validation');
    const viaVariable = await client(admin)
      .rawRequest('query ($n: Int!) { locations(limit: $n) { data { id } } }', { n: -1000 })
      .catch((err: { response: { status: number } }) => err.response);
    expect((viaVariable as { status: number }).status).toBe(400);
  });

  it(`refuses more than ${MAX_ROOT_FIELDS} root fields, aliases included`, async () => {
    const many = `{ ${Array.from({ length: MAX_ROOT_FIELDS + 1 }, (_, i) => `m${i}: me { userId }`).join(' ')} }`;
    const response = await post(many, admin);
    expect(response.status).toBe(400);
    expect(((await response.json()) as { errors: { message: string }[] }).errors[0]!.message).toBe(
      `At most ${MAX_ROOT_FIELDS} root fields (aliases included) per request`,
    );
  });

  it('refuses text that is JSON but not GraphQL, and made-up syntax trees, with 400 graphql.invalid_query', async () => {
    for (const query of ['true', '{"kind":"Document","definitions":[1]}']) {
      const response = await fetch(`${url}?query=${encodeURIComponent(query)}`);
      expect(response.status).toBe(400);
      expect(
        ((await response.json()) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code,
      ).toBe('graphql.invalid_query');
    }
  });

  it('answers a malformed query with 400 graphql.invalid_query naming the problem', async () => {
    const response = await post('{ me { nope } }');
    expect(response.status).toBe(400);
    expect(((await response.json()) as { errors: unknown[] }).errors[0]).toMatchObject({
      message: 'Cannot query field "nope" on type "Me".',
      extensions: { code: 'graphql.invalid_query' },
    });
  });
});

describe('documentation surfaces', () => {
  it('serves the SDL at /v1/schema and GraphiQL at /v1/graphiql', async () => {
    const sdl = await app.inject({ method: 'GET', url: '/v1/schema' });
    expect(sdl.statusCode).toBe(200);
    expect(sdl.body).toContain('verifyTwoFactorLogin(input: VerifyTwoFactorLoginInput!): TwoFactorLogin!');
    expect((await app.inject({ method: 'GET', url: '/v1/graphiql' })).statusCode).toBe(200);
  });

  it('answers the standard introspection query (graphql-js getIntrospectionQuery, 15 levels) with the whole schema, as GraphiQL and code generators ask it', async () => {
    const query = getIntrospectionQuery({
      descriptions: true,
      specifiedByUrl: true,
      directiveIsRepeatable: true,
      schemaDescription: true,
      inputValueDeprecation: true,
    });
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query, operationName: 'IntrospectionQuery' }),
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { data: IntrospectionQuery; errors?: unknown };
    expect(body.errors).toBeUndefined();
    const sdl = (await app.inject({ method: 'GET', url: '/v1/schema' })).body;
    expect(printSchema(buildClientSchema(body.data))).toBe(sdl);
  });

  it('leaves only introspection out of the depth limit: the same nesting below a data field is refused', async () => {
    const beside = `{ me { userId } __schema { types { fields { type { ofType { ofType { ofType { ofType { ofType { name } } } } } } } } } }`;
    expect((await post(beside, admin)).status).toBe(200);
    const inside = `{ me { ${'... on Me { '.repeat(MAX_QUERY_DEPTH - 1)}__typename${' }'.repeat(MAX_QUERY_DEPTH - 1)} } }`;
    expect(
      ((await (await post(inside, admin)).json()) as { errors: { extensions: { code: string } }[] }).errors[0]!
        .extensions.code,
    ).toBe('graphql.too_deep');
  });

  it('GRAPHQL_INTROSPECTION=false: no introspection and no SDL, GraphiQL still served', async () => {
    const closed = await buildApp(testConfig({ graphqlIntrospection: false }), { database, kv }, { logger: false });
    try {
      expect((await closed.inject({ method: 'GET', url: '/v1/schema' })).statusCode).toBe(404);
      expect((await closed.inject({ method: 'GET', url: '/v1/graphiql' })).statusCode).toBe(200);
      const introspection = await closed.inject({
        method: 'POST',
        url: '/v1/gql',
        payload: { query: getIntrospectionQuery() },
      });
      expect(introspection.statusCode).toBe(400);
      expect(introspection.json().errors[0].extensions.code).toBe('graphql.invalid_query');
    } finally {
      await closed.close();
    }
  });

  it('serves GraphiQL and its scripts from this origin only, under a CSP allowing nothing else', async () => {
    const page = await app.inject({ method: 'GET', url: '/v1/graphiql' });
    expect(page.headers['content-security-policy']).toMatch(
      /^default-src 'none'; script-src 'self'; style-src 'self';/,
    );
    const sources = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]!);
    expect(sources).toEqual([
      'graphiql/graphiql.css',
      'graphiql/page.css',
      'graphiql/react.js',
      'graphiql/react-dom.js',
      'graphiql/graphiql.js',
      'graphiql/start.js',
    ]);
    for (const source of sources) {
      const asset = await app.inject({ method: 'GET', url: `/v1/${source}` });
      expect(asset.statusCode, source).toBe(200);
      expect(asset.headers['content-type']).toMatch(source.endsWith('.css') ? /^text\/css/ : /^text\/javascript/);
    }
    expect((await app.inject({ method: 'GET', url: '/v1/graphiql/package.json' })).statusCode).toBe(404);
    expect((await app.inject({ method: 'GET', url: '/v1/graphiql/constructor' })).statusCode).toBe(404);
  });

  it('with the documentation flags off: no SDL, no GraphiQL, no introspection', async () => {
    const closed = await buildApp(
      testConfig({ openapiEnabled: false, swaggerUiEnabled: false, graphqlIntrospection: false }),
      { database, kv },
      { logger: false },
    );
    try {
      expect((await closed.inject({ method: 'GET', url: '/v1/schema' })).statusCode).toBe(404);
      expect((await closed.inject({ method: 'GET', url: '/v1/graphiql' })).statusCode).toBe(404);
      const introspection = await closed.inject({
        method: 'POST',
        url: '/v1/gql',
        payload: { query: '{ __schema { queryType { name } } }' },
      });
      expect(introspection.statusCode).toBe(400);
      expect(introspection.json().errors[0].extensions.code).toBe('graphql.invalid_query');
    } finally {
      await closed.close();
    }
  });
});
