import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { bearer, buildTestApp, createApiKey, expectPermissionChecks, login, TEST_ADMIN, type TestApp } from '../../../test/helpers.js';
import { CONFIG_KEYS } from './config-values.js';

describe('settings', () => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    t = await buildTestApp();
    admin = await login(t.app, 'admin', TEST_ADMIN.password);
  });
  afterAll(() => t.close());

  const call = (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: object, token: string | null = admin) =>
    t.app.inject({ method, url, payload, headers: token ? bearer(token) : {} });

  it('creates a setting holding any JSON value and reads it back', async () => {
    const value = { units: 'nautical', layers: ['sea', 'wind'], limit: 3, on: true };
    const created = await call('POST', '/v1/settings', { key: 'map.defaults', value, description: 'Map defaults' });
    expect(created.statusCode).toBe(201);
    expect(created.json().data).toEqual({
      key: 'map.defaults',
      value,
      description: 'Map defaults',
      is_public: false,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect((await call('GET', '/v1/settings/map.defaults')).json().data.value).toEqual(value);
    expect((await call('GET', '/v1/settings')).json().data.map((s: { key: string }) => s.key)).toContain('map.defaults');
  });

  it.each([null, 0, 'text', [1, 2]])('stores the value %j as given', async (value) => {
    const key = `value.${typeof value}.${Array.isArray(value) ? 'array' : 'x'}`;
    await call('DELETE', `/v1/settings/${key}`);
    expect((await call('POST', '/v1/settings', { key, value })).json().data.value).toEqual(value);
  });

  it('answers a duplicate key with 409, a missing value or a bad key with 400', async () => {
    await call('POST', '/v1/settings', { key: 'dup', value: 1 });
    expect((await call('POST', '/v1/settings', { key: 'dup', value: 2 })).json()).toEqual({ error: 'Conflict', message: "Setting 'dup' already exists", code: 'setting.exists' });
    expect((await call('POST', '/v1/settings', { key: 'no-value' })).json()).toEqual({ error: 'BadRequest', message: "Body field 'value' is required", code: 'request.validation' });
    expect((await call('POST', '/v1/settings', { key: 'Bad Key', value: 1 })).statusCode).toBe(400);
    expect((await call('POST', '/v1/settings', { key: 'public', value: 1 })).statusCode).toBe(400);
  });

  it('refuses a value nested too deep with 400, not 500', async () => {
    const deep = `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`;
    const response = await t.app.inject({ method: 'PUT', url: '/v1/settings/deep', headers: { ...bearer(admin), 'content-type': 'application/json' }, payload: `{"value":${deep}}` });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ error: 'BadRequest', code: 'request.validation' });
  });

  it('PUT creates (201) or replaces (200), keeping what it is not sent', async () => {
    const created = await call('PUT', '/v1/settings/feature.flag', { value: false, description: 'A flag', is_public: true });
    expect(created.statusCode).toBe(201);
    const replaced = await call('PUT', '/v1/settings/feature.flag', { value: true });
    expect(replaced.statusCode).toBe(200);
    expect(replaced.json().data).toMatchObject({ value: true, description: 'A flag', is_public: true });
  });

  it('serves only public settings without credentials', async () => {
    await call('PUT', '/v1/settings/site.name', { value: 'Harbour', is_public: true });
    await call('PUT', '/v1/settings/secret.thing', { value: 'hidden', is_public: false });
    const response = await call('GET', '/v1/settings/public', undefined, null);
    expect(response.statusCode).toBe(200);
    const keys = response.json().data.map((s: { key: string }) => s.key);
    expect(keys).toContain('site.name');
    expect(keys).not.toContain('secret.thing');
    expect(response.json().data.every((s: { is_public: boolean }) => s.is_public)).toBe(true);
  });

  it('deletes with 204, then 404', async () => {
    await call('PUT', '/v1/settings/temp', { value: 1 });
    expect((await call('DELETE', '/v1/settings/temp')).statusCode).toBe(204);
    expect((await call('GET', '/v1/settings/temp')).json()).toEqual({ error: 'NotFound', message: 'Setting not found', code: 'setting.not_found' });
    expect((await call('DELETE', '/v1/settings/temp')).statusCode).toBe(404);
  });

  it('needs settings:read, settings:write and settings:delete', async () => {
    const reader = await createApiKey(t.app, admin, { name: 'settings reader', scopes: ['settings:read'] });
    expect((await call('GET', '/v1/settings', undefined, reader.key)).statusCode).toBe(200);
    expect((await call('POST', '/v1/settings', { key: 'x', value: 1 }, reader.key)).statusCode).toBe(403);
    expect((await call('DELETE', '/v1/settings/dup', undefined, reader.key)).statusCode).toBe(403);
    expect((await call('GET', '/v1/settings', undefined, null)).statusCode).toBe(401);
    await expectPermissionChecks(t.app, admin, [
      { method: 'GET', url: '/v1/settings', permission: 'settings:read' },
      { method: 'GET', url: '/v1/settings/nothing.here', permission: 'settings:read' },
      { method: 'POST', url: '/v1/settings', permission: 'settings:write', payload: {} },
      { method: 'PUT', url: '/v1/settings/nothing.here', permission: 'settings:write', payload: {} },
      { method: 'DELETE', url: '/v1/settings/nothing.here', permission: 'settings:delete' },
      { method: 'GET', url: '/v1/system-config', permission: 'settings:read' },
      { method: 'GET', url: '/v1/system-config/nothing.here', permission: 'settings:read' },
      { method: 'PATCH', url: '/v1/system-config/nothing.here', permission: 'settings:write', payload: { value: 1 } },
    ]);
    expect((await call('GET', '/v1/system-config', undefined, null)).statusCode).toBe(401);
  });
});

describe('system config', () => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    t = await buildTestApp();
    admin = await login(t.app, 'admin', TEST_ADMIN.password);
  });
  afterAll(() => t.close());

  const call = (method: 'GET' | 'PATCH' | 'POST', url: string, payload?: object) => t.app.inject({ method, url, payload, headers: bearer(admin) });

  it('lists the seeded entries by key as a bare array, filtered by prefix', async () => {
    const all = (await call('GET', '/v1/system-config')).json();
    expect(Array.isArray(all)).toBe(true);
    expect(all.map((e: { key: string }) => e.key)).toEqual(['audit.retention_days', 'gps.latest_cache_ttl_secs', 'gps.retention_days', 'map.default_center', 'tracking.units', 'trips.default_gps_logging']);
    // Every value rule belongs to a seeded entry.
    expect(all.map((e: { key: string }) => e.key)).toEqual(expect.arrayContaining(CONFIG_KEYS));
    const trips = (await call('GET', '/v1/system-config?prefix=trips.')).json();
    // The value itself is another test's business (it switches it); the filter is this one's.
    expect(trips).toEqual([{ key: 'trips.default_gps_logging', value: expect.any(Boolean), description: expect.any(String), updated_at: expect.any(String) }]);
    expect((await call('GET', '/v1/system-config?prefix=%25')).json()).toEqual([]);
  });

  it('updates a value; entries are never created', async () => {
    const updated = await call('PATCH', '/v1/system-config/tracking.units', { value: 'nautical' });
    expect(updated.statusCode).toBe(200);
    expect(updated.json().data).toMatchObject({ key: 'tracking.units', value: 'nautical' });
    expect((await call('GET', '/v1/system-config/tracking.units')).json().data.value).toBe('nautical');
    // An entry for client apps takes any JSON value; only entries the service reads have a shape.
    const center = { latitude: 1, longitude: 2, zoom: 3, bearing: 45 };
    expect((await call('PATCH', '/v1/system-config/map.default_center', { value: center })).json().data.value).toEqual(center);
    expect((await call('PATCH', '/v1/system-config/no.such.key', { value: 1 })).statusCode).toBe(404);
    const unknown = await call('GET', '/v1/system-config/no.such.key');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ error: 'NotFound', message: 'System config entry not found', code: 'system_config.not_found' });
    expect((await call('PATCH', '/v1/system-config/tracking.units', {})).statusCode).toBe(400);
    expect((await call('POST', '/v1/system-config', { key: 'x', value: 1 })).statusCode).toBe(404);
  });

  it.each([
    ['trips.default_gps_logging', 'yes', "Body field 'value' must be boolean", 'system_config.invalid_value'],
    ['gps.latest_cache_ttl_secs', 0, "Body field 'value' must be >= 1", 'system_config.invalid_value'],
    ['gps.latest_cache_ttl_secs', 1.5, "Body field 'value' must be integer", 'system_config.invalid_value'],
    ['gps.latest_cache_ttl_secs', '60', "Body field 'value' must be integer", 'system_config.invalid_value'],
  ])('refuses a value %s cannot use (%j) with 400 and keeps the old one', async (key, value, message, code) => {
    const before = (await call('GET', `/v1/system-config/${key}`)).json().data.value;
    const response = await call('PATCH', `/v1/system-config/${key}`, { value });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ error: 'BadRequest', message, code });
    expect((await call('GET', `/v1/system-config/${key}`)).json().data.value).toEqual(before);
  });

  /** The TTL the latest-point cache is written with when a new point arrives. */
  async function latestPointTtl(timestamp: number): Promise<unknown> {
    // On whichever node takes the point.
    const writes = t.nodes.map((node) => vi.spyOn(node.kv, 'keepNewest'));
    try {
      const point = { latitude: 1, longitude: 2, timestamp, speed_kmh: 0, speed_mps: 0, speed_mph: 0, speed_knots: 0 };
      expect((await call('POST', '/v1/gps', point)).statusCode).toBe(201);
      return writes.flatMap((spy) => spy.mock.calls).find(([entries]) => entries.some(({ key }) => key === 'gps:latest:v2:all'))?.[1];
    } finally {
      for (const spy of writes) spy.mockRestore();
    }
  }

  it('gps.latest_cache_ttl_secs sets how long a new latest point stays cached', async () => {
    expect((await call('PATCH', '/v1/system-config/gps.latest_cache_ttl_secs', { value: 60 })).statusCode).toBe(200);
    try {
      expect(await latestPointTtl(1_767_225_600)).toBe(60);
    } finally {
      await call('PATCH', '/v1/system-config/gps.latest_cache_ttl_secs', { value: 300 });
    }
  });

  it('uses the default for a stored value the service cannot use (written before the rules existed)', async () => {
    await call('PATCH', '/v1/system-config/gps.latest_cache_ttl_secs', { value: 300 }); // forgets the remembered value
    await t.database.db.updateTable('system_config').set({ value: JSON.stringify('soon') }).where('key', '=', 'gps.latest_cache_ttl_secs').execute();
    try {
      expect(await latestPointTtl(1_767_225_700)).toBe(300);
    } finally {
      await call('PATCH', '/v1/system-config/gps.latest_cache_ttl_secs', { value: 300 });
    }
  });

  it('trips.default_gps_logging decides gps_logging_enabled of new trips that do not say', async () => {
    expect((await call('PATCH', '/v1/system-config/trips.default_gps_logging', { value: true })).statusCode).toBe(200);
    const trip = (await t.app.inject({ method: 'POST', url: '/v1/trips', headers: bearer(admin), payload: { name: 'defaulted' } })).json().data;
    expect(trip.gps_logging_enabled).toBe(true);
    const explicit = (await t.app.inject({ method: 'POST', url: '/v1/trips', headers: bearer(admin), payload: { name: 'explicit', gps_logging_enabled: false } })).json().data;
    expect(explicit.gps_logging_enabled).toBe(false);
  });
});
