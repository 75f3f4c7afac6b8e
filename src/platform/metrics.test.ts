import { spawnSync } from 'node:child_process';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildTestApp,
  login,
  TEST_ADMIN,
  type TestApp,
  twoNodes,
  UNAUTHORIZED,
  UNKNOWN_ID,
} from '../../test/helpers.js';

const TOKEN = 'metrics-token-0123456789abcdef';

// The metrics are each node's own (Prometheus scrapes every node): on two nodes a scrape sees half the requests.
describe.skipIf(twoNodes)('GET /metrics', () => {
  let t: TestApp;
  let off: TestApp;
  beforeAll(async () => {
    [t, off] = await Promise.all([buildTestApp({ config: { metricsToken: TOKEN } }), buildTestApp()]);
  });
  afterAll(async () => {
    await Promise.all([t.close(), off.close()]);
  });

  it('serves Prometheus text with requests by route pattern and status, their latency, and the process', async () => {
    const admin = await login(t.app, 'admin', TEST_ADMIN.password);
    await t.as(admin).get(`/v1/gps/${UNKNOWN_ID}`);
    await t.as(null).get('/v1/health');

    const response = await t.as(TOKEN).raw({ method: 'GET', url: '/metrics' });
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toContain('text/plain');
    const families = new Map(parsePrometheusTextFormat(response.text).map((family) => [family.name, family]));
    const requests = families.get('waygate_http_requests_total')!;
    expect(requests.type).toBe('COUNTER');
    expect(requests.metrics).toContainEqual({
      labels: { method: 'GET', route: '/v1/gps/:id', status: '404' },
      value: '1',
    });
    const latency = families.get('waygate_http_request_duration_seconds')!;
    expect(latency.type).toBe('HISTOGRAM');
    expect(latency.metrics.length).toBeGreaterThan(0);
    // (The parser drops a histogram's labels; its count line is plain text.)
    // (At least 1: another test of this file may have asked for health first.)
    expect(response.text).toMatch(
      /waygate_http_request_duration_seconds_count\{method="GET",route="\/v1\/health",status="200"\} [1-9]\d*\n/,
    );
    expect(families.get('waygate_websocket_connections')).toMatchObject({ type: 'GAUGE', metrics: [{ value: '0' }] });
    // The process's metrics under their standard names; the application's under waygate_.
    expect(families.has('process_resident_memory_bytes')).toBe(true);
    expect(families.has('nodejs_eventloop_lag_seconds')).toBe(true);
    expect([...families.keys()].filter((name) => !/^(waygate|process|nodejs)_/.test(name))).toEqual([]);
    expect([...families.keys()].filter((name) => /^waygate_(process|nodejs)_/.test(name))).toEqual([]);
    // No gauge ends in _total (a counter's suffix).
    expect(
      [...families.values()]
        .filter((family) => family.type === 'GAUGE' && family.name.endsWith('_total'))
        .map((family) => family.name),
    ).toEqual([]);
    // Signing in ran statements; the histogram's count line for successful ones is above zero.
    expect(
      Number(/waygate_db_statement_duration_seconds_count\{outcome="ok"\} (\d+)/.exec(response.text)?.[1]),
    ).toBeGreaterThan(0);
    const connections = families.get('waygate_db_connections')!;
    expect(connections.type).toBe('GAUGE');
    expect(Number(connections.metrics.find((m) => m.labels?.state === 'total')?.value)).toBeGreaterThanOrEqual(1);
  });

  it('counts cache lookups by cache and source, adding only what happened since the last scrape', async () => {
    const scrape = async () => {
      const body = (await t.as(TOKEN).raw({ method: 'GET', url: '/metrics' })).text;
      const family = parsePrometheusTextFormat(body).find((f) => f.name === 'waygate_cache_lookups_total')!;
      return (cache: string, source: string) =>
        Number(family.metrics.find((m) => m.labels?.cache === cache && m.labels?.source === source)?.value ?? 0);
    };
    const admin = await login(t.app, 'admin', TEST_ADMIN.password);
    const before = await scrape();
    for (let i = 0; i < 3; i++) await t.as(admin).get('/v1/roles');
    for (let i = 0; i < 2; i++) await t.as(admin).get('/v1/gps/current');
    const after = await scrape();
    // The first read of the latest point fills its cache from the database; the second finds it there.
    expect(after('latest_points', 'database') - before('latest_points', 'database')).toBe(1);
    expect(after('latest_points', 'shared') - before('latest_points', 'shared')).toBe(1);
    // The first read of the session loads it; the next ones find it in this process's map.
    expect(after('credentials', 'local') - before('credentials', 'local')).toBeGreaterThanOrEqual(2);
    expect(
      after('roles', 'local') +
        after('roles', 'shared') +
        after('roles', 'database') -
        before('roles', 'local') -
        before('roles', 'shared') -
        before('roles', 'database'),
    ).toBe(3);
  });

  // promtool is Prometheus's own linter (Debian's prometheus package, which .ci/run installs).
  const promtool = spawnSync('promtool', ['--version']).status === 0;
  it.skipIf(!promtool)('passes promtool check metrics without a complaint', async () => {
    await t.as(null).get('/v1/health');
    const body = (await t.as(TOKEN).raw({ method: 'GET', url: '/metrics' })).text;
    const check = spawnSync('promtool', ['check', 'metrics'], { input: body, encoding: 'utf8' });
    expect(check.stdout + check.stderr).toBe('');
    expect(check.status).toBe(0);
  });

  it('wants the token, and does not exist without one configured', async () => {
    expect((await t.as(null).raw({ method: 'GET', url: '/metrics' })).body).toEqual(UNAUTHORIZED);
    expect((await t.as('wrong-token-0123456789').raw({ method: 'GET', url: '/metrics' })).status).toBe(401);
    expect((await off.as(TOKEN).raw({ method: 'GET', url: '/metrics' })).status).toBe(404);
  });
});
