import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  buildTestApp,
  createApiKey,
  expectPermissionChecks,
  login,
  TEST_ADMIN,
  type TestApp,
} from '../../../test/helpers.js';
import { unchecked, type Client } from '../../../test/client.js';
import { CONFIG_KEYS } from './config-values.js';

describe('settings', () => {
  let t: TestApp;
  let admin: string;
  let api: Client;
  beforeAll(async () => {
    t = await buildTestApp();
    admin = await login(t.app, 'admin', TEST_ADMIN.password);
    api = t.as(admin);
  });
  afterAll(() => t.close());

  it('creates a setting holding any JSON value and reads it back', async () => {
    const value = { units: 'nautical', layers: ['sea', 'wind'], limit: 3, on: true };
    const created = await api
      .post('/v1/settings', { key: 'map.defaults', value, description: 'Map defaults' })
      .expect(201);
    expect(created.body.data).toEqual({
      key: 'map.defaults',
      value,
      description: 'Map defaults',
      is_public: false,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect((await api.get('/v1/settings/map.defaults').expect(200)).body.data.value).toEqual(value);
    expect((await api.get('/v1/settings').expect(200)).body.data.map((s: { key: string }) => s.key)).toContain(
      'map.defaults',
    );
  });

  it.each([null, 0, 'text', [1, 2]])('stores the value %j as given', async (value) => {
    const key = `value.${typeof value}.${Array.isArray(value) ? 'array' : 'x'}`;
    await api.delete(`/v1/settings/${key}`);
    expect((await api.post('/v1/settings', { key, value }).expect(201)).body.data.value).toEqual(value);
  });

  it('answers a duplicate key with 409, a missing value or a bad key with 400', async () => {
    await api.post('/v1/settings', { key: 'dup', value: 1 });
    expect((await api.post('/v1/settings', { key: 'dup', value: 2 })).body).toEqual({
      error: 'Conflict',
      message: "Setting 'dup' already exists",
      code: 'setting.exists',
    });
    expect((await api.post('/v1/settings', unchecked({ key: 'no-value' }))).body).toEqual({
      error: 'BadRequest',
      message: "Body field 'value' is required",
      code: 'request.validation',
    });
    expect((await api.post('/v1/settings', { key: 'Bad Key', value: 1 })).status).toBe(400);
    expect((await api.post('/v1/settings', { key: 'public', value: 1 })).status).toBe(400);
  });

  it('refuses a value nested too deep with 400, not 500', async () => {
    const deep = `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`;
    const response = await api
      .put('/v1/settings/deep', unchecked(`{"value":${deep}}`), { headers: { 'content-type': 'application/json' } })
      .expect(400);
    expect(response.body).toMatchObject({ error: 'BadRequest', code: 'request.validation' });
  });

  it('PUT creates (201) or replaces (200), keeping what it is not sent', async () => {
    const created = await api
      .put('/v1/settings/feature.flag', { value: false, description: 'A flag', is_public: true })
      .expect(201);
    const replaced = await api.put('/v1/settings/feature.flag', { value: true }).expect(200);
    expect(replaced.body.data).toMatchObject({ value: true, description: 'A flag', is_public: true });
  });

  it('serves only public settings without credentials', async () => {
    await api.put('/v1/settings/site.name', { value: 'Harbour', is_public: true });
    await api.put('/v1/settings/secret.thing', { value: 'hidden', is_public: false });
    const response = await t.as(null).get('/v1/settings/public').expect(200);
    const keys = response.body.data.map((s: { key: string }) => s.key);
    expect(keys).toContain('site.name');
    expect(keys).not.toContain('secret.thing');
    expect(response.body.data.every((s: { is_public: boolean }) => s.is_public)).toBe(true);
  });

  it('deletes with 204, then 404', async () => {
    await api.put('/v1/settings/temp', { value: 1 });
    expect((await api.delete('/v1/settings/temp')).status).toBe(204);
    expect((await api.get('/v1/settings/temp')).body).toEqual({
      error: 'NotFound',
      message: 'Setting not found',
      code: 'setting.not_found',
    });
    expect((await api.delete('/v1/settings/temp')).status).toBe(404);
  });

  it('needs settings:read, settings:write and settings:delete', async () => {
    const reader = await createApiKey(t.app, admin, { name: 'settings reader', scopes: ['settings:read'] });
    expect((await t.as(reader.key).get('/v1/settings')).status).toBe(200);
    expect((await t.as(reader.key).post('/v1/settings', { key: 'x', value: 1 })).status).toBe(403);
    expect((await t.as(reader.key).delete('/v1/settings/dup')).status).toBe(403);
    expect((await t.as(null).get('/v1/settings')).status).toBe(401);
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
    expect((await t.as(null).get('/v1/system-config')).status).toBe(401);
  });
});

describe('system config', () => {
  let t: TestApp;
  let admin: string;
  let api: Client;
  beforeAll(async () => {
    t = await buildTestApp();
    admin = await login(t.app, 'admin', TEST_ADMIN.password);
    api = t.as(admin);
  });
  afterAll(() => t.close());

  it('lists the seeded entries by key as a bare array, filtered by prefix', async () => {
    const all = (await api.get('/v1/system-config').expect(200)).body;
    expect(Array.isArray(all)).toBe(true);
    expect(all.map((e: { key: string }) => e.key)).toEqual([
      'audit.retention_days',
      'events.retention_days',
      'gps.latest_cache_ttl_secs',
      'gps.retention_days',
      'map.default_center',
      'tracking.self_service',
      'tracking.units',
      'trips.default_gps_logging',
    ]);
    // Every value rule belongs to a seeded entry.
    expect(all.map((e: { key: string }) => e.key)).toEqual(expect.arrayContaining(CONFIG_KEYS));
    const trips = (await api.get('/v1/system-config?prefix=trips.')).body;
    // The value itself is another test's business (it switches it); the filter is this one's.
    expect(trips).toEqual([
      {
        key: 'trips.default_gps_logging',
        value: expect.any(Boolean),
        description: expect.any(String),
        value_schema: { type: 'boolean' },
        updated_at: expect.any(String),
      },
    ]);
    expect((await api.get('/v1/system-config?prefix=%25')).body).toEqual([]);
    // Each entry says the shape of its values, so that clients offer a typed field; an entry for client apps has none.
    expect(Object.fromEntries(all.map((e: { key: string; value_schema: unknown }) => [e.key, e.value_schema]))).toEqual(
      {
        'audit.retention_days': { anyOf: [{ type: 'null' }, { type: 'integer', minimum: 1, maximum: 36_500 }] },
        'events.retention_days': { anyOf: [{ type: 'null' }, { type: 'integer', minimum: 1, maximum: 36_500 }] },
        'gps.latest_cache_ttl_secs': { type: 'integer', minimum: 1, maximum: 86_400 },
        'gps.retention_days': { anyOf: [{ type: 'null' }, { type: 'integer', minimum: 1, maximum: 36_500 }] },
        'map.default_center': null,
        'tracking.self_service': { type: 'boolean' },
        'tracking.units': null,
        'trips.default_gps_logging': { type: 'boolean' },
      },
    );
    expect((await api.get('/v1/system-config/gps.latest_cache_ttl_secs').expect(200)).body.data.value_schema).toEqual({
      type: 'integer',
      minimum: 1,
      maximum: 86_400,
    });
  });

  it('updates a value; entries are never created', async () => {
    const updated = await api.patch('/v1/system-config/tracking.units', { value: 'nautical' }).expect(200);
    expect(updated.body.data).toMatchObject({ key: 'tracking.units', value: 'nautical' });
    expect((await api.get('/v1/system-config/tracking.units').expect(200)).body.data.value).toBe('nautical');
    // An entry for client apps takes any JSON value; only entries the service reads have a shape.
    const center = { latitude: 1, longitude: 2, zoom: 3, bearing: 45 };
    expect(
      (await api.patch('/v1/system-config/map.default_center', { value: center }).expect(200)).body.data.value,
    ).toEqual(center);
    expect((await api.patch('/v1/system-config/no.such.key', { value: 1 })).status).toBe(404);
    const unknown = await api.get('/v1/system-config/no.such.key').expect(404);
    expect(unknown.body).toEqual({
      error: 'NotFound',
      message: 'System config entry not found',
      code: 'system_config.not_found',
    });
    expect((await api.patch('/v1/system-config/tracking.units', unchecked({}))).status).toBe(400);
    expect((await api.raw({ method: 'POST', url: '/v1/system-config', payload: { key: 'x', value: 1 } })).status).toBe(
      404,
    );
  });

  it.each([
    ['trips.default_gps_logging', 'yes', "Body field 'value' must be boolean", 'system_config.invalid_value'],
    ['gps.latest_cache_ttl_secs', 0, "Body field 'value' must be >= 1", 'system_config.invalid_value'],
    ['gps.latest_cache_ttl_secs', 1.5, "Body field 'value' must be integer", 'system_config.invalid_value'],
    ['gps.latest_cache_ttl_secs', '60', "Body field 'value' must be integer", 'system_config.invalid_value'],
  ])('refuses a value %s cannot use (%j) with 400 and keeps the old one', async (key, value, message, code) => {
    const before = (await api.get(`/v1/system-config/${key}`).expect(200)).body.data.value;
    const response = await api.patch(`/v1/system-config/${key}`, { value }).expect(400);
    expect(response.body).toEqual({ error: 'BadRequest', message, code });
    expect((await api.get(`/v1/system-config/${key}`).expect(200)).body.data.value).toEqual(before);
  });

  /** The TTL the latest-point cache is written with when a new point arrives. */
  async function latestPointTtl(timestamp: number): Promise<unknown> {
    // On whichever node takes the point.
    const writes = t.nodes.map((node) => vi.spyOn(node.kv, 'keepNewest'));
    try {
      const point = { latitude: 1, longitude: 2, timestamp, speed_kmh: 0, speed_mps: 0, speed_mph: 0, speed_knots: 0 };
      expect((await api.post('/v1/gps', point)).status).toBe(201);
      return writes
        .flatMap((spy) => spy.mock.calls)
        .find(([entries]) => entries.some(({ key }) => key === 'gps:latest:v2:all'))?.[1];
    } finally {
      for (const spy of writes) spy.mockRestore();
    }
  }

  it('gps.latest_cache_ttl_secs sets how long a new latest point stays cached', async () => {
    expect((await api.patch('/v1/system-config/gps.latest_cache_ttl_secs', { value: 60 })).status).toBe(200);
    try {
      expect(await latestPointTtl(1_767_225_600)).toBe(60);
    } finally {
      await api.patch('/v1/system-config/gps.latest_cache_ttl_secs', { value: 300 });
    }
  });

  it('uses the default for a stored value the service cannot use (written before the rules existed)', async () => {
    await api.patch('/v1/system-config/gps.latest_cache_ttl_secs', { value: 300 }); // forgets the remembered value
    await t.database.db
      .updateTable('system_config')
      .set({ value: JSON.stringify('soon') })
      .where('key', '=', 'gps.latest_cache_ttl_secs')
      .execute();
    try {
      expect(await latestPointTtl(1_767_225_700)).toBe(300);
    } finally {
      await api.patch('/v1/system-config/gps.latest_cache_ttl_secs', { value: 300 });
    }
  });

  it('trips.default_gps_logging decides gps_logging_enabled of new trips that do not say', async () => {
    expect((await api.patch('/v1/system-config/trips.default_gps_logging', { value: true })).status).toBe(200);
    const trip = (await api.post('/v1/trips', { name: 'defaulted' }).expect(201)).body.data;
    expect(trip.gps_logging_enabled).toBe(true);
    const explicit = (await api.post('/v1/trips', { name: 'explicit', gps_logging_enabled: false }).expect(201)).body
      .data;
    expect(explicit.gps_logging_enabled).toBe(false);
  });
});
