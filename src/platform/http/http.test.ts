import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InjectOptions } from 'fastify';
import { unchecked } from '../../../test/client.js';
import { bearer, buildTestApp, login, TEST_ADMIN, TEST_SYSTEM_KEY, type TestApp } from '../../../test/helpers.js';
import { openSocket } from '../../../test/ws-client.js';
import { classifyDatabaseError } from '../db/errors.js';
import { defineErrors } from './errors.js';
import { errorResponses, offsetOf, PageEnvelope, PageQuery, paginated, single, SingleEnvelope } from './envelopes.js';

/** Errors of the probe routes, as a module declares its own. */
const ProbeErrors = defineErrors('probe', {
  name_taken: [409, 'Username is already taken'],
  key_taken: [409, 'A setting with this key already exists', { constraint: 'settings_pkey' }],
});

const Item = Type.Object({ id: Type.Integer(), item_name: Type.String() });
const ITEMS = Array.from({ length: 25 }, (_, i) => ({
  id: i + 1,
  item_name: `item ${i + 1}`,
  secret_column: 'hidden',
}));

/** Probe routes that exercise the shared conventions the way feature routes will. */
async function probeRoutes(app: FastifyInstance): Promise<void> {
  app.get(
    '/v1/probe/items',
    { schema: { querystring: PageQuery(10), response: { 200: PageEnvelope(Item) } } },
    async (request) => {
      const page = request.query as { page: number; limit: number };
      const offset = offsetOf(page);
      return paginated(request, ITEMS.slice(offset, offset + page.limit), ITEMS.length, page);
    },
  );
  app.post(
    '/v1/probe/items',
    {
      schema: {
        body: Type.Object({ item_name: Type.String({ minLength: 1 }), count: Type.Integer({ maximum: 5 }) }),
        response: { 201: SingleEnvelope(Item), ...errorResponses(400) },
      },
    },
    async (request, response) => response.status(201).send(single(request, ITEMS[0])),
  );
  app.get('/v1/probe/one', { schema: { response: { 200: SingleEnvelope(Item) } } }, async (request) =>
    single(request, ITEMS[0]),
  );
  app.get('/v1/probe/boom', async () => {
    throw new Error('connection string postgres://admin:hunter2@db/internal');
  });
  app.get('/v1/probe/:id/query-failure', async () => {
    await sql`select * from no_such_table where token = ${'ses_secret_query_parameter'}`.execute(app.database.db);
  });
  app.get('/v1/probe/conflict', async () => {
    throw ProbeErrors.name_taken();
  });
  app.get('/v1/probe/duplicate', async () => {
    const row = { key: 'dup', value: JSON.stringify(1) };
    await app.database.db.insertInto('settings').values(row).execute();
    await app.database.db.insertInto('settings').values(row).execute();
  });
  app.get('/v1/probe/duplicate-category', async () => {
    const row = { name: 'dup', sort_order: 1 };
    await app.database.db.insertInto('trip_categories').values(row).execute();
    await app.database.db.insertInto('trip_categories').values(row).execute();
  });
  // A NUL the schema layer never saw (made by the handler): the database's refusal still answers 400.
  app.post('/v1/probe/text', { schema: { body: Type.Object({ text: Type.String() }) } }, async (request) => {
    const { text } = request.body as { text: string };
    await sql`select ${text.replace('~', '\u0000')}::text as echoed`.execute(app.database.db);
  });
  app.get('/v1/probe/bad-number', async () => {
    await sql`select ${'twelve'}::integer as n`.execute(app.database.db);
  });
  app.get('/v1/probe/division', async () => {
    await sql`select ${1}::int / ${0}::int as ratio`.execute(app.database.db);
  });
  app.get('/v1/probe/missing-reference', async () => {
    await app.database.db
      .insertInto('trips')
      .values({ name: 'x', device_id: '00000000-0000-4000-8000-000000000000' })
      .execute();
  });
  app.get('/v1/probe/connection-lost', async () => {
    throw Object.assign(new Error('Connection terminated unexpectedly'), { code: undefined });
  });
  // A driver error with the code given (a SQLSTATE or a socket error).
  app.get<{ Querystring: { code: string } }>('/v1/probe/database-fault', async (request) => {
    throw Object.assign(new Error('driver error'), { code: request.query.code });
  });
}

describe('HTTP conventions', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ extraRoutes: probeRoutes, config: { bodyLimitBytes: 2048 }, captureLogs: true });
  });
  afterAll(() => t.close());

  /** A GET to any path (the probe routes are outside the OpenAPI document) with Host api.test. */
  const get = (url: string, headers: Record<string, string> = {}) =>
    t.as(null).raw({ method: 'GET', url, headers: { host: 'api.test', ...headers } });

  it('answers unknown routes with 404 NotFound', async () => {
    const response = await get('/v1/nothing-here?x=1');
    expect(response.status).toBe(404);
    expect(response.body).toEqual({
      error: 'NotFound',
      message: 'No route for GET /v1/nothing-here',
      code: 'request.route_not_found',
    });
  });

  it('wraps a page with pagination and absolute links that keep other query parameters', async () => {
    const response = await get('/v1/probe/items?page=2&limit=10&sort=name');
    expect(response.status).toBe(200);
    const body = response.body;
    expect(body.data).toHaveLength(10);
    expect(body.data[0]).toEqual({ id: 11, item_name: 'item 11' }); // no column the schema does not name
    expect(body.pagination).toEqual({ page: 2, limit: 10, total: 25, total_pages: 3 });
    expect(body._links).toEqual({
      self: 'http://api.test/v1/probe/items?page=2&limit=10&sort=name',
      first: 'http://api.test/v1/probe/items?page=1&limit=10&sort=name',
      prev: 'http://api.test/v1/probe/items?page=1&limit=10&sort=name',
      next: 'http://api.test/v1/probe/items?page=3&limit=10&sort=name',
      last: 'http://api.test/v1/probe/items?page=3&limit=10&sort=name',
    });
  });

  it('uses the endpoint default limit and omits prev on the first page and next on the last', async () => {
    const first = (await get('/v1/probe/items')).body;
    expect(first.pagination).toEqual({ page: 1, limit: 10, total: 25, total_pages: 3 });
    expect(first._links).not.toHaveProperty('prev');
    expect(first._links.next).toBe('http://api.test/v1/probe/items?page=2&limit=10');
    const last = (await get('/v1/probe/items?page=3')).body;
    expect(last.data).toHaveLength(5);
    expect(last._links).not.toHaveProperty('next');
  });

  it.each([
    ['limit=101', "Query parameter 'limit' must be <= 100"],
    ['limit=0', "Query parameter 'limit' must be >= 1"],
    ['page=0', "Query parameter 'page' must be >= 1"],
    ['page=abc', "Query parameter 'page' must be integer"],
  ])('rejects %s with 400 naming the parameter', async (query, message) => {
    const response = await get(`/v1/probe/items?${query}`);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: 'BadRequest', message, code: 'request.validation' });
  });

  it('wraps one resource as { data, _links: { self } }', async () => {
    const response = await t.as(null).raw({
      method: 'POST',
      url: '/v1/probe/items',
      headers: { host: 'api.test' },
      payload: { item_name: 'x', count: 1 },
    });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      data: { id: 1, item_name: 'item 1' },
      _links: { self: 'http://api.test/v1/probe/items' },
    });
  });

  it.each([
    '/v1/probe/one',
    '/v1/probe/one?device=abc-1&at=2024-01-01T00:00:00Z',
    '/v1/probe/one?q=a%20b&next=/v1/x',
    "/v1/probe/one?q='quoted'",
    '/v1/probe/one?q=<tag>&r={x}|^`',
    '/v1/probe/one?path=/./x/../y',
    '/v1/probe/one?a=1//2',
  ])('gives %s the self link the URL standard would (with or without parsing it)', async (target) => {
    const response = await get(target);
    expect(response.status, response.text).toBe(200);
    expect(response.body._links.self).toBe(new URL(`http://api.test${target}`).toString());
    const withPort = await get(target, { host: 'API.test:80' });
    expect(withPort.body._links.self).toBe(new URL(`http://API.test:80${target}`).toString());
  });

  it.each(['a b', 'api.test:99999', '[::1', 'x%zz', 'a/b', 'a?b', 'a#b', 'user@api.test'])(
    'refuses the Host %j, which cannot stand in a link, with 400 before any handler (not 500 after it)',
    async (host) => {
      const response = await get('/v1/probe/one', { host });
      expect({ status: response.status, body: response.body }).toEqual({
        status: 400,
        body: { error: 'BadRequest', message: 'The Host header is not a valid host', code: 'request.bad_host' },
      });
      expect(response.headers['x-request-id']).toEqual(expect.any(String));
    },
  );

  it.each([
    [{ count: 1 }, "Body field 'item_name' is required"],
    [{ item_name: 'x', count: 9 }, "Body field 'count' must be <= 5"],
    [{ item_name: 'x', count: '3' }, "Body field 'count' must be integer"],
    [{ item_name: '', count: 1 }, "Body field 'item_name' must NOT have fewer than 1 characters"],
  ])('rejects the body %j with 400 naming the field', async (payload, message) => {
    const response = await t.as(null).raw({ method: 'POST', url: '/v1/probe/items', payload });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: 'BadRequest', message, code: 'request.validation' });
  });

  it('rejects malformed JSON with 400', async () => {
    const response = await t.as(null).raw({
      method: 'POST',
      url: '/v1/probe/items',
      headers: { 'content-type': 'application/json' },
      payload: '{"item_name": "x",',
    });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      error: 'BadRequest',
      message: expect.stringMatching(/^Malformed JSON body/),
      code: 'request.malformed_json',
    });
  });

  it('rejects an oversized body with 413', async () => {
    const response = await t.as(null).raw({
      method: 'POST',
      url: '/v1/probe/items',
      payload: { item_name: 'x'.repeat(4096), count: 1 },
    });
    expect(response.status).toBe(413);
    expect(response.body).toEqual({
      error: 'PayloadTooLarge',
      message: 'Request body is too large',
      code: 'request.body_too_large',
    });
  });

  it('rejects a body that is not JSON with 415', async () => {
    const response = await t.as(null).raw({
      method: 'POST',
      url: '/v1/probe/items',
      headers: { 'content-type': 'text/plain' },
      payload: 'hello',
    });
    expect(response.status).toBe(415);
    expect(response.body).toEqual({
      error: 'UnsupportedMediaType',
      message: 'Unsupported Content-Type; send application/json',
      code: 'request.unsupported_media_type',
    });
  });

  it('passes a declared error through as { error, message, code }', async () => {
    const response = await get('/v1/probe/conflict');
    expect(response.status).toBe(409);
    expect(response.body).toEqual({
      error: 'Conflict',
      message: 'Username is already taken',
      code: 'probe.name_taken',
    });
  });

  it('answers a violated constraint with the error declared for it, and writes nothing twice', async () => {
    const response = await get('/v1/probe/duplicate');
    expect(response.status).toBe(409);
    expect(response.body).toEqual({
      error: 'Conflict',
      message: 'A setting with this key already exists',
      code: 'probe.key_taken',
    });
    const rows = await t.database.db.selectFrom('settings').select('key').where('key', '=', 'dup').execute();
    expect(rows).toHaveLength(1);
  });

  it('answers a unique violation nobody declared with the generic 409', async () => {
    const response = await get('/v1/probe/duplicate-category');
    if (response.status === 200) return; // trip category names may repeat; then there is nothing to map
    expect(response.status).toBe(409);
    expect(response.body).toEqual({
      error: 'Conflict',
      message: 'A resource with the same unique value already exists',
      code: 'database.unique_violation',
    });
  });

  it('refuses NUL in a body string, a path parameter or a query parameter with 400 naming the field, before any handler', async () => {
    const admin = await login(t.app, 'admin', TEST_ADMIN.password);
    const cases: [InjectOptions, string][] = [
      [
        { method: 'POST', url: '/v1/auth/login', payload: '{"identifier":"ad\\u0000min","password":"x"}' },
        "Body field 'identifier' must not contain NUL characters",
      ],
      [
        {
          method: 'POST',
          url: '/v1/auth/login',
          payload: '{"identifier":"admin","password":"x","turnstile_token":"\\u0000"}',
        },
        "Body field 'turnstile_token' must not contain NUL characters",
      ],
      [{ method: 'GET', url: '/v1/platforms/em%00ail' }, "Path parameter 'id_or_slug' must not contain NUL characters"],
      [
        { method: 'GET', url: '/v1/users?role_id=role_%00', headers: bearer(admin) },
        "Query parameter 'role_id' must not contain NUL characters",
      ],
      // Deep in a batch: the path down to it is named.
      [
        {
          method: 'POST',
          url: '/v1/gps/batch',
          headers: bearer(admin),
          payload: '[{"latitude":1},{"latitude":1,"motion":"walk\\u0000ing"}]',
        },
        "Body field '1.motion' must not contain NUL characters",
      ],
      [
        {
          method: 'POST',
          url: '/v1/gps/batch',
          headers: bearer(admin),
          payload: '[{"latitude":1},{"latitude":1e400}]',
        },
        "Body field '1.latitude' must be a finite number",
      ],
    ];
    for (const [request, message] of cases) {
      const response = await t.as(null).raw({
        ...request,
        headers: { 'content-type': 'application/json', ...request.headers },
      });
      expect({ url: request.url, status: response.status, body: response.body }).toEqual({
        url: request.url,
        status: 400,
        body: { error: 'BadRequest', message, code: 'request.validation' },
      });
    }
  });

  it('answers an overlong path parameter with 414 and a malformed URL with 400, echoing neither', async () => {
    const long = await t.as(null).get(`/v1/platforms/${'a'.repeat(5000)}`);
    expect({ status: long.status, body: long.body }).toEqual({
      status: 414,
      body: { error: 'URITooLong', message: 'A path parameter is too long', code: 'request.uri_too_long' },
    });
    const malformed = await t.as(null).get('/v1/platforms/%E0%A4%A');
    expect({ status: malformed.status, body: malformed.body }).toEqual({
      status: 400,
      body: {
        error: 'BadRequest',
        message: 'The URL is not valid (a malformed percent-encoding)',
        code: 'request.bad_url',
      },
    });
  });

  it('quotes at most a short prefix of a long input in an error body (a 6 KB path answers 404 in a few hundred bytes)', async () => {
    const path = `/v1/no-such-thing/${'x'.repeat(6000)}`;
    const response = await t.as(null).raw({ method: 'GET', url: path });
    expect(response.status).toBe(404);
    expect(response.text.length).toBeLessThan(300);
    expect(response.body).toEqual({
      error: 'NotFound',
      message: `No route for GET ${path.slice(0, 64)}… (${path.length} characters)`,
      code: 'request.route_not_found',
    });
    // A short input is quoted whole.
    expect((await t.as(null).raw({ method: 'GET', url: '/v1/nowhere' })).body.message).toBe(
      'No route for GET /v1/nowhere',
    );
  });

  it('refuses compressed bodies and charsets other than UTF-8 with 415 saying what to send', async () => {
    const signIn = (headers: Record<string, string>) =>
      t.as(null).post('/v1/auth/login', unchecked('{"identifier":"admin","password":"x"}'), { headers });
    expect((await signIn({ 'content-type': 'application/json', 'content-encoding': 'gzip' })).body).toEqual({
      error: 'UnsupportedMediaType',
      message: 'Content-Encoding gzip is not supported; send the body uncompressed',
      code: 'request.unsupported_media_type',
    });
    expect((await signIn({ 'content-type': 'application/json; charset=utf-16' })).body).toEqual({
      error: 'UnsupportedMediaType',
      message: 'charset utf-16 is not supported; send UTF-8',
      code: 'request.unsupported_media_type',
    });
    expect((await signIn({ 'content-type': 'application/json; charset=UTF-8' })).status).toBe(401);
  });

  it('refuses numbers JSON can write but not carry back (1e400 is Infinity) with 400 naming the field', async () => {
    const response = await t
      .as(null)
      .post('/v1/auth/login', unchecked('{"identifier":"admin","password":"x","extra":{"depth":1e400}}'), {
        headers: { 'content-type': 'application/json' },
      });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      error: 'BadRequest',
      message: "Body field 'extra.depth' must be a finite number",
      code: 'request.validation',
    });
  });

  it('answers text with a NUL byte that reaches PostgreSQL with 400 instead of 500', async () => {
    const response = await t.as(null).raw({
      method: 'POST',
      url: '/v1/probe/text',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ text: 'a~b' }),
    });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      error: 'BadRequest',
      message: 'Text must not contain NUL characters or invalid byte sequences',
      code: 'database.invalid_text',
    });
  });

  it('answers any other data exception of the database (class 22, here a division by zero) with 400', async () => {
    const response = await get('/v1/probe/division');
    expect({ status: response.status, code: response.body.code }).toEqual({
      status: 400,
      code: 'database.invalid_value',
    });
  });

  it('answers a value the database cannot read as its type with 400', async () => {
    const response = await get('/v1/probe/bad-number');
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      error: 'BadRequest',
      message: 'A value has an invalid format or is out of range',
      code: 'database.invalid_value',
    });
  });

  it('answers a reference to nothing with 400 naming the column', async () => {
    const response = await get('/v1/probe/missing-reference');
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      error: 'BadRequest',
      message: 'device_id does not name an existing device',
      code: 'database.missing_reference',
    });
  });

  it('answers a lost database connection with 503', async () => {
    const response = await get('/v1/probe/connection-lost');
    expect(response.status).toBe(503);
    expect(response.body).toEqual({
      error: 'ServiceUnavailable',
      message: 'The database is unavailable; try again shortly',
      code: 'database.unavailable',
    });
  });

  it.each([
    ['53300', 'too many connections (several nodes on one server)'],
    ['53200', 'the server is out of memory'],
    ['57014', 'a statement cancelled (statement_timeout)'],
    ['EAI_AGAIN', 'the database host cannot be resolved for now'],
    ['ENETUNREACH', 'no route to the database'],
  ])('answers %s (%s) with 503', async (code) => {
    const response = await get(`/v1/probe/database-fault?code=${code}`);
    expect({ status: response.status, code: response.body.code }).toEqual({
      status: 503,
      code: 'database.unavailable',
    });
  });

  it('answers unexpected faults with 500 and leaks no internals', async () => {
    const response = await get('/v1/probe/boom');
    expect(response.status).toBe(500);
    expect(response.body).toEqual({
      error: 'InternalServerError',
      message: 'An unexpected error occurred',
      code: 'request.internal',
    });
    expect(response.text).not.toContain('hunter2');
  });

  it('logs one JSON line per request with method, path, status, latency and request id, and no credentials', async () => {
    await get('/v1/probe/items?page=1&token=query-secret', {
      authorization: 'Bearer ses_super_secret_token',
      'x-request-id': 'trace-abc-123',
    });
    const lines = t.logs().filter((line) => line.request_id === 'trace-abc-123');
    expect(lines).toEqual([
      expect.objectContaining({
        msg: 'request completed',
        method: 'GET',
        route: '/v1/probe/items',
        status: 200,
        latency_ms: expect.any(Number),
      }),
    ]);
    const everything = JSON.stringify(t.logs());
    expect(everything).not.toContain('ses_super_secret_token');
    expect(everything).not.toContain('query-secret');
  });

  it('logs the route pattern (never the path) and a failed query without its parameters', async () => {
    const response = await get('/v1/probe/ses_in_the_path/query-failure', { 'x-request-id': 'trace-query' });
    expect(response.status).toBe(500);
    const lines = t.logs().filter((line) => line.request_id === 'trace-query');
    expect(lines.map((line) => line.msg)).toEqual(['unexpected error', 'request completed']);
    expect(lines[1]).toMatchObject({ route: '/v1/probe/:id/query-failure', status: 500 });
    const logged = JSON.stringify(lines);
    expect(logged).toContain('no_such_table');
    expect(logged).not.toContain('ses_secret_query_parameter');
    expect(logged).not.toContain('ses_in_the_path');
  });

  it('returns the request id to the client', async () => {
    const response = await get('/v1/probe/items', { 'x-request-id': 'trace-xyz' });
    expect(response.headers['x-request-id']).toBe('trace-xyz');
    const generated = await get('/v1/probe/items', { 'x-request-id': 'not a valid id!' });
    expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('logging above info', () => {
  it("writes no request lines, and a handler's warning still carries its request id", async () => {
    const t = await buildTestApp({
      captureLogs: true,
      config: { logLevel: 'warn' },
      extraRoutes: async (app) => {
        app.get('/v1/probe/chatty', async (request) => {
          request.log.info('not written at warn');
          request.log.warn({ detail: 1 }, 'written at warn');
          return { ok: true };
        });
      },
    });
    try {
      await t.as(null).raw({ method: 'GET', url: '/v1/probe/chatty', headers: { 'x-request-id': 'trace-warn' } });
      await t.as(null).get('/v1');
      expect(t.logs()).toEqual([
        expect.objectContaining({ level: 40, msg: 'written at warn', detail: 1, request_id: 'trace-warn' }),
      ]);
    } finally {
      await t.close();
    }
  });
});

describe('links with PUBLIC_URL', () => {
  it('builds absolute links from PUBLIC_URL, including a path prefix', async () => {
    const t = await buildTestApp({ extraRoutes: probeRoutes, config: { publicUrl: 'https://gps.example.org/api' } });
    try {
      const body = (await t.as(null).raw({ method: 'GET', url: '/v1/probe/items?page=3' })).body;
      expect(body._links.self).toBe('https://gps.example.org/api/v1/probe/items?page=3&limit=10');
      expect(body._links.prev).toBe('https://gps.example.org/api/v1/probe/items?page=2&limit=10');
    } finally {
      await t.close();
    }
  });
});

describe('a WebSocket upgrade to a route without WebSocket', () => {
  it('logs neither the path nor the query string, which may carry tokens', async () => {
    const t = await buildTestApp({ captureLogs: true });
    try {
      const base = await t.app.listen({ host: '127.0.0.1', port: 0 });
      // The system key looks a session up by its token in the path (GET /v1/sessions/{token}).
      const session = await login(t.app, 'admin', TEST_ADMIN.password);
      const headers = bearer(TEST_SYSTEM_KEY);
      for (const path of [`/v1/sessions/${session}`, '/verify-email?token=secret_in_the_query']) {
        const socket = await openSocket(base, { path, headers: path.startsWith('/v1/sessions/') ? headers : {} });
        await socket.closed;
      }
      await expect
        .poll(
          () =>
            t
              .logs()
              .filter((line) => line.msg === 'closed incoming websocket connection for path with no websocket handler')
              .length,
        )
        .toBe(2);
      const everything = JSON.stringify(t.logs());
      expect(everything).not.toContain(session);
      expect(everything).not.toContain('secret_in_the_query');
    } finally {
      await t.close();
    }
  });
});

describe('an upgrade request refused before its route (system key outside its allowlist, a bad Host, a rate limit)', () => {
  it('does not keep the connection, so it neither piles up nor holds the server open on close', async () => {
    const t = await buildTestApp();
    const base = await t.app.listen({ host: '127.0.0.1', port: 0 });
    await expect(openSocket(base, { path: '/v1/health', headers: bearer(TEST_SYSTEM_KEY) })).rejects.toThrow(
      'handshake refused: 403',
    );
    let closed = false;
    await Promise.race([t.close().then(() => (closed = true)), new Promise((resolve) => setTimeout(resolve, 5000))]);
    expect(closed, 'the server closed within 5 s').toBe(true);
  });
});
