import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/helpers.js';

const APP = 'https://app.example.org';
const preflight = (t: TestApp, origin: string) =>
  t.as(null).raw({
    method: 'OPTIONS',
    url: '/v1/gps',
    headers: {
      origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization, content-type',
    },
  });

describe('CORS', () => {
  let open: TestApp;
  let closed: TestApp;
  beforeAll(async () => {
    [open, closed] = await Promise.all([buildTestApp({ config: { corsOrigins: [APP] } }), buildTestApp()]);
  });
  afterAll(async () => {
    await Promise.all([open.close(), closed.close()]);
  });

  it('answers a preflight from a configured origin, with bearer headers allowed and no credentials mode', async () => {
    const response = await preflight(open, APP);
    expect(response.status).toBe(204);
    expect(response.headers).toMatchObject({
      'access-control-allow-origin': APP,
      'access-control-allow-methods': 'GET, HEAD, POST, PUT, PATCH, DELETE',
      'access-control-allow-headers': 'Authorization, Content-Type, X-Request-Id, X-Source-Service',
      'access-control-max-age': '600',
    });
    expect(response.headers).not.toHaveProperty('access-control-allow-credentials');
    const read = await open.as(null).get('/v1', { headers: { origin: APP } });
    expect(read.headers['access-control-allow-origin']).toBe(APP);
    expect(read.headers['access-control-expose-headers']).toContain('X-RateLimit-Remaining');
  });

  it('tells other origins nothing, and is off unless CORS_ORIGINS is set', async () => {
    expect((await preflight(open, 'https://evil.example')).headers).not.toHaveProperty('access-control-allow-origin');
    const response = await preflight(closed, APP);
    expect(response.headers).not.toHaveProperty('access-control-allow-origin');
    expect(response.status).toBe(404);
  });
});
