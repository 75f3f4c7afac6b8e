import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/helpers.js';
import { VERSION } from '../../version.js';

const CHROME_ON_WINDOWS =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';

describe('health and info', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(() => t.close());

  it.each(['/health', '/v1/health'])('GET %s reports every service', async (path) => {
    const response = await t.app.inject({ method: 'GET', url: path, headers: { host: 'waygate.test' } });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toEqual({
      status: 'healthy',
      version: VERSION,
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      uptime: {
        days: expect.any(Number),
        hours: expect.any(Number),
        minutes: expect.any(Number),
        seconds: expect.any(Number),
        total: expect.any(Number),
      },
      services: {
        database: { status: 'up', responseTime: expect.any(Number) },
        cache: { status: 'up', responseTime: expect.any(Number) },
        websocket: { status: expect.any(String), connections: 0, subscriptions: 0 },
      },
      _links: { self: `http://waygate.test${path}` },
    });
    expect(Math.abs(Date.parse(body.timestamp) - Date.now())).toBeLessThan(5000);
  });

  it('GET /v1 describes the server and the client', async () => {
    const response = await t.app.inject({
      method: 'GET',
      url: '/v1',
      headers: { host: 'waygate.test', 'user-agent': CHROME_ON_WINDOWS },
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      version: VERSION,
      server: { uptime: expect.objectContaining({ total: expect.any(Number) }) },
      client: { ip: '127.0.0.1', userAgent: CHROME_ON_WINDOWS, browser: 'Chrome 120.0.0.0', os: 'Windows 10' },
      timestamp: expect.any(String),
      _links: { self: 'http://waygate.test/v1' },
    });
  });

  it('GET /v1 without a user agent reports nulls', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/v1', headers: { 'user-agent': '' } });
    expect(response.json().client).toEqual({ ip: '127.0.0.1', userAgent: null, browser: null, os: null });
  });

  it('serves a valid OpenAPI 3.1 document listing every route', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/v1/openapi.json' });
    expect(response.statusCode).toBe(200);
    const document = response.json();
    expect(document.openapi).toBe('3.1.0');
    const result = await new Validator().validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(['/health', '/v1/health', '/v1']));
    expect(document.paths['/v1/health'].get.responses).toHaveProperty('503');
  });

  it("lists the error codes each operation answers: its own, its guard's and validation's", async () => {
    const { paths } = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    const codes = (operation: { responses: Record<string, { 'x-error-codes'?: string[] }> }) =>
      Object.fromEntries(
        Object.entries(operation.responses)
          .filter(([status]) => status >= '400')
          .map(([status, r]) => [status, r['x-error-codes']]),
      );
    expect(codes(paths['/v1/trips/{id}'].patch)).toEqual({
      400: ['database.missing_reference', 'request.validation', 'trip.invalid_transition'],
      401: ['auth.unauthorized'],
      403: ['trip.not_owner', 'device.not_owner', 'sharing.self_service_off', 'auth.forbidden'],
      404: ['trip.not_found'],
      409: ['trip.logging_conflict'],
      429: ['request.rate_limited'],
    });
    expect(codes(paths['/v1/sessions'].post)).toMatchObject({
      401: ['auth.unauthorized'],
      403: ['auth.banned', 'auth.system_key_required'],
    });
    // A GET route's HEAD twin shares its schema: the requirement is still stated once.
    expect(paths['/v1/trips'].get.description).toBe(
      'Requires permission `trips:read` (every device) or `trips:read_own` (your own devices and those shared with you).',
    );
  });

  it('documents the accountability routes with their security, their 4xx responses and examples', async () => {
    const { paths, components } = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    const routes = [
      ['get', '/v1/users/me/audit'],
      ['get', '/v1/users/{user_id}/audit'],
      ['get', '/v1/admin/audit'],
      ['post', '/v1/users/me/audit/{event_id}/report'],
      ['get', '/v1/users/me/audit/reports'],
      ['get', '/v1/admin/audit/reports'],
      ['patch', '/v1/admin/audit/reports/{report_id}'],
      ['post', '/v1/internal/audit'],
      ['get', '/v1/users/{id}/ban'],
      ['post', '/v1/users/{id}/ban'],
      ['delete', '/v1/users/{id}/ban'],
      ['get', '/v1/users/{id}/bans'],
      ['get', '/v1/admin/users/{id}/deletion-status'],
      ['post', '/v1/admin/users/{id}/force-delete'],
      ['post', '/v1/admin/users/{id}/cancel-deletion'],
      ['get', '/v1/user/export'],
      ['get', '/v1/user/export/logs'],
    ] as const;
    type Response = { content?: Record<string, { example?: unknown }> };
    const gaps = routes.flatMap(([method, path]) => {
      const operation = paths[path]?.[method] as
        { security?: unknown[]; responses: Record<string, Response> } | undefined;
      if (!operation) return [`${method} ${path}: missing`];
      const errors = Object.entries(operation.responses).filter(([status]) => status >= '400' && status < '500');
      return [
        ...(operation.security?.length ? [] : [`${method} ${path}: no security`]),
        ...(errors.length ? [] : [`${method} ${path}: no 4xx response`]),
        ...errors
          .filter(([, response]) => !response.content?.['application/json']?.example)
          .map(([status]) => `${method} ${path}: ${status} without example`),
      ];
    });
    expect(gaps).toEqual([]);
    expect(
      paths['/v1/users/{id}/ban'].post.responses['200'].content['application/json'].schema.properties.data,
    ).toEqual({ $ref: '#/components/schemas/Ban' });
    expect(components.schemas.Ban.examples).toHaveLength(1);
  });

  it('serves Swagger UI', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/v1/swagger-ui/' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toContain('text/html');
  });
});

describe('health probes', () => {
  it('probe the database and the store at most once a second, shared by concurrent callers', async () => {
    const t = await buildTestApp();
    const ping = t.database.ping;
    let pings = 0;
    (t.database as { ping: () => Promise<void> }).ping = async () => {
      pings++;
      return ping();
    };
    try {
      t.clock.freeze();
      const answers = await Promise.all(
        Array.from({ length: 5 }, () => t.app.inject({ method: 'GET', url: '/v1/health' })),
      );
      await t.app.inject({ method: 'GET', url: '/health' });
      expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200, 200, 200, 200]);
      expect(pings).toBe(1);
      t.clock.advance(1000);
      await t.app.inject({ method: 'GET', url: '/v1/health' });
      expect(pings).toBe(2);
    } finally {
      (t.database as { ping: () => Promise<void> }).ping = ping;
      await t.close();
    }
  });
});

describe('health when the database does not answer', () => {
  it('says so and answers 503', async () => {
    const t = await buildTestApp();
    const ping = t.database.ping;
    (t.database as { ping: () => Promise<void> }).ping = async () => {
      throw new Error('connection refused');
    };
    try {
      const response = await t.app.inject({ method: 'GET', url: '/health' });
      expect(response.statusCode).toBe(503);
      expect(response.json()).toMatchObject({
        status: 'unhealthy',
        services: { database: { status: 'down' }, cache: { status: 'up' } },
      });
    } finally {
      (t.database as { ping: () => Promise<void> }).ping = ping;
      await t.close();
    }
  });
});

describe('documentation surfaces switched off', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ config: { openapiEnabled: false, swaggerUiEnabled: false } });
  });
  afterAll(() => t.close());

  it.each(['/v1/openapi.json', '/v1/swagger-ui/', '/v1/swagger-ui/json'])('GET %s answers 404', async (url) => {
    const response = await t.app.inject({ method: 'GET', url });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({
      error: 'NotFound',
      message: expect.any(String),
      code: 'request.route_not_found',
    });
  });
});
