import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { unchecked, type Client } from '../../../test/client.js';
import {
  buildTestApp,
  createApiKey,
  expectPermissionChecks,
  login,
  TEST_ADMIN,
  type TestApp,
  testConfig,
  twoNodes,
  UNKNOWN_ID,
} from '../../../test/helpers.js';

const POINT = {
  latitude: 53.55,
  longitude: 9.99,
  altitude: 12.5,
  heading: 90,
  timestamp: 1_767_225_600, // 2026-01-01T00:00:00Z
  speed_kmh: 18.52,
  speed_mps: 5.14,
  speed_mph: 11.51,
  speed_knots: 10,
};

describe('GPS points', () => {
  let t: TestApp;
  let admin: string;
  let api: Client;
  beforeAll(async () => {
    t = await buildTestApp({ config: { rateLimit: { ...testConfig().rateLimit, gpsWrite: 1000 } } });
    admin = await login(t.app, 'admin', TEST_ADMIN.password);
    api = t.as(admin);
  });
  afterAll(() => t.close());

  /** Sends the point as it is given (some are broken on purpose). */
  const send = (token: string, point: Record<string, unknown>) => t.as(token).post('/v1/gps', unchecked(point));
  const newDevice = async (body: { name?: string; api_key_id?: string } = {}) =>
    (await api.post('/v1/devices', { name: 'boat', ...body }).expect(201)).body.data;
  /**
   * A base timestamp newer than any point sent before: the latest point overall is shared by the
   * tests of this app, and they run in any order, so each test that checks it sends newer points.
   */
  let newestBase = 1_800_000_000;
  const newerBase = () => (newestBase += 100_000);

  it('records a point: epoch seconds in, ISO 8601 out', async () => {
    const response = await send(admin, POINT).expect(201);
    expect(response.body).toEqual({
      data: {
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        trip_id: null,
        ...POINT,
        timestamp: '2026-01-01T00:00:00.000Z',
        pdop: null,
        hdop: null,
        vdop: null,
        accuracy: null,
        battery_level: null,
        charging: null,
        motion: null,
        alarm: null,
        created_at: expect.any(String),
      },
      _links: { self: expect.stringMatching(/\/v1\/gps\/[0-9a-f-]{36}$/) },
    });
    expect(response.headers.location).toBe(response.body._links.self);
    // No device: no device_id at all (the spec's "present when the point belongs to a device").
    expect(response.text).not.toContain('device_id');
    const { id } = response.body.data;
    expect((await api.get(`/v1/gps/${id}`).expect(200)).body.data).not.toHaveProperty('device_id');
    const listed = (await api.get('/v1/gps?limit=100').expect(200)).body.data.find((p) => p.id === id);
    expect(listed).toMatchObject({ id, trip_id: null });
    expect(listed).not.toHaveProperty('device_id');
  });

  it.each([
    ['speed_knots', "Body field 'speed_knots' is required", 'request.validation'],
    ['timestamp', "Body field 'timestamp' is required", 'request.validation'],
    ['latitude', "Body field 'latitude' is required", 'request.validation'],
  ])('requires %s', async (field, message, code) => {
    const { [field]: _omitted, ...rest } = POINT as Record<string, unknown>;
    const response = await send(admin, rest);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: 'BadRequest', message, code });
  });

  it.each([
    [{ latitude: 91 }, "Body field 'latitude' must be <= 90", 'request.validation'],
    [{ longitude: -181 }, "Body field 'longitude' must be >= -180", 'request.validation'],
    [{ timestamp: 1.5 }, "Body field 'timestamp' must be integer", 'request.validation'],
    [{ timestamp: '1767225600' }, "Body field 'timestamp' must be integer", 'request.validation'],
    [{ device_id: 'boat-1' }, 'Body field \'device_id\' must match format "uuid"', 'request.validation'],
  ])('rejects %j with 400', async (change, message, code) => {
    const response = await send(admin, { ...POINT, ...change });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: 'BadRequest', message, code });
  });

  it('rejects a device_id that names no device with 400', async () => {
    const response = await send(admin, { ...POINT, device_id: '00000000-0000-4000-8000-000000000000' });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ message: 'device_id does not name an existing device' });
  });

  it('takes a device_id in upper case as the device it names', async () => {
    const device = await newDevice();
    const response = await send(admin, { ...POINT, device_id: device.id.toUpperCase() }).expect(201);
    expect(response.body.data.device_id).toBe(device.id);
  });

  it('takes the device from the API key linked to it when the body names none', async () => {
    const { id: keyId, key } = await createApiKey(t.app, admin, { name: 'tracker', scopes: ['gps:write', 'gps:read'] });
    const device = await newDevice({ api_key_id: keyId });
    const response = await send(key, { ...POINT, timestamp: POINT.timestamp + 60 }).expect(201);
    expect(response.body.data.device_id).toBe(device.id);
  });

  it('serves the latest point overall and per device, and a new point is visible at once', async () => {
    const device = await newDevice();
    const at = newerBase();
    const first = (await send(admin, { ...POINT, device_id: device.id, timestamp: at }).expect(201)).body.data;
    const current = await api.get('/v1/gps/current').expect(200);
    expect(current.body.data).toEqual(first);
    expect((await api.get(`/v1/gps/current?device_id=${device.id}`).expect(200)).body.data).toEqual(first);

    const second = (await send(admin, { ...POINT, device_id: device.id, timestamp: at + 60 }).expect(201)).body.data;
    expect((await api.get('/v1/gps/current').expect(200)).body.data.id).toBe(second.id);
    expect((await api.get(`/v1/gps/current?device_id=${device.id}`).expect(200)).body.data.id).toBe(second.id);

    // A late point with an older timestamp does not replace the latest one.
    await send(admin, { ...POINT, device_id: device.id, timestamp: at - 1000 });
    expect((await api.get('/v1/gps/current').expect(200)).body.data.id).toBe(second.id);
  });

  it('answers the latest point from the cache, without the database', async () => {
    await send(admin, { ...POINT, timestamp: newerBase() });
    await api.get('/v1/gps/current');
    const reads = vi.spyOn(t.database.db, 'selectFrom');
    for (let i = 0; i < 5; i++) expect((await api.get('/v1/gps/current')).status).toBe(200);
    expect(reads).not.toHaveBeenCalled();
    reads.mockRestore();
  });

  // Makes one node's store connection fail (t.kv is the first node's): the other node's cache still answers.
  it.skipIf(twoNodes)('answers the latest point from the database while the cache store fails', async () => {
    const point = (await send(admin, { ...POINT, timestamp: newerBase() }).expect(201)).body.data;
    const failing = (key: string) => key.startsWith('gps:latest:');
    const { get: realGet, keepNewest: realKeepNewest } = t.kv;
    const kvGet = vi
      .spyOn(t.kv, 'get')
      .mockImplementation((key) => (failing(key) ? Promise.reject(new Error('store down')) : realGet.call(t.kv, key)));
    const kvKeepNewest = vi
      .spyOn(t.kv, 'keepNewest')
      .mockImplementation((entries, ...rest) =>
        entries.some(({ key }) => failing(key))
          ? Promise.reject(new Error('store down'))
          : realKeepNewest.call(t.kv, entries, ...rest),
      );
    try {
      const response = await api.get('/v1/gps/current').expect(200);
      expect(response.body.data).toEqual(point);
      expect(kvGet).toHaveBeenCalled();
    } finally {
      kvGet.mockRestore();
      kvKeepNewest.mockRestore();
    }
  });

  it('stores a point (201) even when the cache TTL setting cannot be read', async () => {
    // On whichever node takes the point.
    const configReads = t.nodes.map((node) =>
      vi.spyOn(node.services.settings, 'configValue').mockRejectedValue(new Error('database busy')),
    );
    try {
      const response = await send(admin, { ...POINT, timestamp: newerBase() }).expect(201);
      expect(configReads.flatMap((spy) => spy.mock.calls)).toContainEqual(['gps.latest_cache_ttl_secs', 300]);
      expect((await api.get('/v1/gps/current').expect(200)).body.data.id).toBe(response.body.data.id);
    } finally {
      for (const spy of configReads) spy.mockRestore();
    }
  });

  it('answers the cached latest point as JSON with the self link of each request', async () => {
    const point = (await send(admin, { ...POINT, timestamp: newerBase() }).expect(201)).body.data;
    for (const [host, url] of [
      ['a.example', '/v1/gps/current'],
      ['b.example:8080', '/v1/gps/current'],
      ['a.example', '/v1/gps/current?x=1'],
    ] as const) {
      const response = await api.get(url, { headers: { host } }).expect(200);
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(response.body).toEqual({ data: point, _links: { self: `http://${host}${url}` } });
      // Serialized by the response schema: its fields, in its order.
      expect(Object.keys(response.body.data)).toEqual(Object.keys(point));
    }
  });

  it('serves the latest point of a device however its id is spelled', async () => {
    const device = await newDevice();
    const at = newerBase();
    await send(admin, { ...POINT, device_id: device.id, timestamp: at });
    const upper = `/v1/gps/current?device_id=${device.id.toUpperCase()}` as const;
    expect((await api.get(upper)).status).toBe(200);
    const newer = (await send(admin, { ...POINT, device_id: device.id, timestamp: at + 60 }).expect(201)).body.data;
    expect((await api.get(upper).expect(200)).body.data).toEqual(newer);
  });

  it('answers 404 for a device without points', async () => {
    const device = await newDevice();
    const response = await api.get(`/v1/gps/current?device_id=${device.id}`);
    expect(response.status).toBe(404);
    expect(response.body).toEqual({
      error: 'NotFound',
      message: 'No GPS point for this device',
      code: 'gps.no_point',
    });
    await send(admin, { ...POINT, device_id: device.id });
    expect((await api.get(`/v1/gps/current?device_id=${device.id}`)).status).toBe(200);
  });

  it('lists the latest point of every device as a bare array', async () => {
    const a = await newDevice({ name: 'a' });
    const b = await newDevice({ name: 'b' });
    await send(admin, { ...POINT, device_id: a.id, timestamp: 1_700_000_000 });
    const aLatest = (await send(admin, { ...POINT, device_id: a.id, timestamp: 1_700_000_100 }).expect(201)).body.data;
    const bLatest = (await send(admin, { ...POINT, device_id: b.id, timestamp: 1_700_000_050 }).expect(201)).body.data;
    const silent = await newDevice({ name: 'silent' });
    const body = (await api.get('/v1/gps/current/devices').expect(200)).body;
    expect(Array.isArray(body)).toBe(true);
    expect(body).toEqual(expect.arrayContaining([aLatest, bLatest]));
    expect(body.filter((p) => p.device_id === a.id)).toHaveLength(1);
    // By device id; a device without points is not listed.
    const ids = body.map((p) => p.device_id);
    expect(ids).toEqual([...ids].sort());
    expect(ids).not.toContain(silent.id);
  });

  // Counts the queries of the first node's database (t.database): on two nodes the request may land on the other.
  it.skipIf(twoNodes)(
    'lists the latest points from the cache, and reads the many a cold cache misses in one query',
    async () => {
      const devices = [];
      for (let i = 0; i < 20; i++) devices.push(await newDevice({ name: `cold ${i}` }));
      const at = newerBase();
      const points = [];
      for (const [i, device] of devices.entries())
        points.push((await send(admin, { ...POINT, device_id: device.id, timestamp: at + i }).expect(201)).body.data);
      const before = (await api.get('/v1/gps/current/devices').expect(200)).body;
      expect(before).toEqual(expect.arrayContaining(points));

      // Cached: no point read from the database (the device ids are).
      const reads = vi.spyOn(t.database.db, 'selectFrom');
      expect((await api.get('/v1/gps/current/devices').expect(200)).body).toEqual(before);
      expect(reads.mock.calls.filter(([table]) => table !== 'devices')).toEqual([]);
      reads.mockClear();

      // Cold for these 20 (as after a restart): one read of the points for all of them, and the cache filled again.
      for (const device of devices) await t.kv.delete(`gps:latest:v2:device:${device.id}`);
      expect((await api.get('/v1/gps/current/devices').expect(200)).body).toEqual(before);
      expect(reads.mock.calls.filter(([table]) => table !== 'devices')).toHaveLength(1);
      reads.mockClear();
      expect((await api.get('/v1/gps/current/devices').expect(200)).body).toEqual(before);
      expect(reads.mock.calls.filter(([table]) => table !== 'devices')).toEqual([]);
      reads.mockRestore();
    },
  );

  it('pages points newest first with a default limit of 10', async () => {
    const at = newerBase();
    for (const n of [3, 1, 11, 2, 10, 4, 9, 5, 8, 6, 7]) await send(admin, { ...POINT, timestamp: at + n });
    const body = (await api.get('/v1/gps').expect(200)).body;
    expect(body.data).toHaveLength(10);
    expect(body.data[0]!.timestamp).toBe(new Date((at + 11) * 1000).toISOString());
    expect(body.pagination).toEqual({ page: 1, limit: 10, total: expect.any(Number), total_pages: expect.any(Number) });
    const times = body.data.map((p) => Date.parse(p.timestamp));
    expect(times).toEqual([...times].sort((x, y) => y - x));
    expect((await api.get('/v1/gps?limit=101')).status).toBe(400);
  });

  it('gets and deletes a point; 404 afterwards; the latest cache forgets it', async () => {
    const device = await newDevice();
    const at = newerBase();
    const earlier = (await send(admin, { ...POINT, timestamp: at - 1 }).expect(201)).body.data;
    const point = (await send(admin, { ...POINT, device_id: device.id, timestamp: at }).expect(201)).body.data;
    expect((await api.get(`/v1/gps/${point.id}`).expect(200)).body.data).toEqual(point);
    expect((await api.get('/v1/gps/current').expect(200)).body.data.id).toBe(point.id);
    await api.delete(`/v1/gps/${point.id}`).expect(204);
    expect((await api.get(`/v1/gps/${point.id}`)).status).toBe(404);
    expect((await api.get('/v1/gps/current').expect(200)).body.data.id).toBe(earlier.id);
    expect((await api.get(`/v1/gps/current?device_id=${device.id}`)).status).toBe(404);
  });

  it('forgets the latest point of a deleted device: its points have no device any more', async () => {
    const device = await newDevice();
    const point = (await send(admin, { ...POINT, device_id: device.id, timestamp: newerBase() }).expect(201)).body.data;
    expect((await api.get(`/v1/gps/current?device_id=${device.id}`).expect(200)).body.data.id).toBe(point.id);
    expect((await api.get('/v1/gps/current').expect(200)).body.data.device_id).toBe(device.id);
    await api.delete(`/v1/devices/${device.id}`).expect(204);
    const { device_id: _gone, ...withoutDevice } = point;
    expect((await api.get(`/v1/gps/${point.id}`).expect(200)).body.data).toEqual(withoutDevice);
    expect((await api.get(`/v1/gps/current?device_id=${device.id}`)).status).toBe(404);
    expect((await api.get('/v1/gps/current').expect(200)).body.data).toEqual(withoutDevice);
  });

  it('never takes a late, older point for the latest, also when nothing is cached', async () => {
    const device = await newDevice();
    const at = newerBase();
    const newest = (await send(admin, { ...POINT, device_id: device.id, timestamp: at }).expect(201)).body.data;
    // The cached entries expire (5 minutes) or go with a deleted point; then a late point arrives.
    await t.kv.delete('gps:latest:v2:all');
    await t.kv.delete(`gps:latest:v2:device:${device.id}`);
    await send(admin, { ...POINT, device_id: device.id, timestamp: at - 1000 });
    expect((await api.get('/v1/gps/current').expect(200)).body.data.id).toBe(newest.id);
    expect((await api.get(`/v1/gps/current?device_id=${device.id}`).expect(200)).body.data.id).toBe(newest.id);

    // Points of one device sent at once, out of order: the newest wins.
    const other = await newDevice();
    const sent = await Promise.all(
      [5, 1, 4, 2, 3].map(
        async (n) =>
          (await send(admin, { ...POINT, device_id: other.id, timestamp: at + 10_000 + n }).expect(201)).body.data,
      ),
    );
    const latest = sent.find((p) => p.timestamp === new Date((at + 10_000 + 5) * 1000).toISOString());
    expect((await api.get(`/v1/gps/current?device_id=${other.id}`).expect(200)).body.data.id).toBe(latest!.id);
    expect((await api.get('/v1/gps/current').expect(200)).body.data.id).toBe(latest!.id);
  });

  // A point that belongs to a trip cannot be deleted: see trips.test.ts.

  it('needs gps:read, gps:write and gps:delete', async () => {
    const { key } = await createApiKey(t.app, admin, { name: 'reader', scopes: ['gps:read'] });
    expect((await t.as(key).get('/v1/gps/current')).status).not.toBe(403);
    expect((await send(key, POINT)).status).toBe(403);
    const point = (await send(admin, POINT).expect(201)).body.data;
    expect((await t.as(key).delete(`/v1/gps/${point.id}`)).status).toBe(403);
    expect((await t.as(null).get('/v1/gps')).status).toBe(401);
    await expectPermissionChecks(t.app, admin, [
      { method: 'GET', url: '/v1/gps', permission: 'gps:read' },
      { method: 'GET', url: '/v1/gps/current', permission: 'gps:read' },
      { method: 'GET', url: '/v1/gps/current/devices', permission: 'gps:read' },
      { method: 'GET', url: `/v1/gps/${UNKNOWN_ID}`, permission: 'gps:read' },
      { method: 'POST', url: '/v1/gps', permission: 'gps:write', payload: {} },
      { method: 'DELETE', url: `/v1/gps/${UNKNOWN_ID}`, permission: 'gps:delete' },
    ]);
  });

  it('answers 404 for unknown points and 400 for ids that are not UUIDs', async () => {
    for (const method of ['GET', 'DELETE'] as const) {
      const unknown = await (method === 'GET' ? api.get(`/v1/gps/${UNKNOWN_ID}`) : api.delete(`/v1/gps/${UNKNOWN_ID}`));
      expect({ method, status: unknown.status, body: unknown.body }).toEqual({
        method,
        status: 404,
        body: { error: 'NotFound', message: 'GPS point not found', code: 'gps.point_not_found' },
      });
      const malformed = await (method === 'GET' ? api.get('/v1/gps/not-a-uuid') : api.delete('/v1/gps/not-a-uuid'));
      expect(malformed.body).toEqual({
        error: 'BadRequest',
        message: `Path parameter 'id' must match format "uuid"`,
        code: 'request.validation',
      });
    }
  });
});

describe('GPS write limit', () => {
  it('counts POST /v1/gps against RATE_LIMIT_GPS_WRITE per identity', async () => {
    const t = await buildTestApp({
      config: {
        rateLimit: {
          ...testConfig().rateLimit,
          enabled: true,
          windowSecs: 3600,
          anonymous: 100,
          user: 100,
          apiKey: 100,
          gpsWrite: 2,
        },
      },
    });
    try {
      const api = t.as(await login(t.app, 'admin', TEST_ADMIN.password));
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await api.post('/v1/gps', POINT)).status);
      expect(statuses).toEqual([201, 201, 429]);
      expect((await api.get('/v1/gps')).status).toBe(200);
    } finally {
      await t.close();
    }
  });

  // Exact X-RateLimit-Remaining below half the bucket: each node defers its hits there up to 50 ms (platform/rate-limit-counter.ts).
  it.skipIf(twoNodes)('does not count a write the caller may not make', async () => {
    const limits = {
      ...testConfig().rateLimit,
      enabled: true,
      windowSecs: 3600,
      apiKey: 100,
      gpsWrite: 2,
      headers: 'always' as const,
    };
    const t = await buildTestApp({ config: { rateLimit: limits } });
    try {
      const admin = await login(t.app, 'admin', TEST_ADMIN.password);
      const { key: reader } = await createApiKey(t.app, admin, { name: 'reader', scopes: ['gps:read'] });
      for (let i = 0; i < 3; i++) {
        const refused = await t.as(reader).post('/v1/gps', POINT);
        expect(refused.status).toBe(403);
        // Only the key's own bucket was counted: the write bucket would be the tighter one.
        expect(refused.headers['x-ratelimit-limit']).toBe('100');
        expect(refused.headers['x-ratelimit-remaining']).toBe(String(99 - i));
      }
    } finally {
      await t.close();
    }
  });
});
