import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { unchecked, type Client } from '../../../test/client.js';
import {
  buildTestApp,
  expectPermissionChecks,
  login,
  TEST_ADMIN,
  testConfig,
  UNKNOWN_ID,
  type TestApp,
} from '../../../test/helpers.js';

const POINT = { latitude: 54.32, longitude: 10.14, speed_kmh: 1, speed_mps: 0.28, speed_mph: 0.62, speed_knots: 0.54 };
const HOUR = 3_600_000;

describe('trips', () => {
  let t: TestApp;
  let admin: string;
  let api: Client;
  let adminId: string;
  beforeAll(async () => {
    t = await buildTestApp({ config: { rateLimit: { ...testConfig().rateLimit, gpsWrite: 10_000, user: 10_000 } } });
    const response = await t
      .as(null)
      .post('/v1/auth/login', { identifier: 'admin', password: TEST_ADMIN.password })
      .expect(200);
    admin = response.body.session_token!;
    api = t.as(admin);
    adminId = response.body.user_id;
  });
  afterAll(() => t.close());

  const newDevice = async () => (await api.post('/v1/devices', { name: 'tracker' }).expect(201)).body.data.id as string;
  const newTrip = async (body: Record<string, unknown> = {}) =>
    (await api.post('/v1/trips', { name: 'Kiel to Fehmarn', ...body }).expect(201)).body.data;
  const setStatus = (id: string, status: string, extra: Record<string, unknown> = {}) =>
    api.patch(`/v1/trips/${id}`, { status, ...extra });
  const sendPoint = async (deviceId: string | null, timestamp: number) =>
    (await api.post('/v1/gps', { ...POINT, timestamp, ...(deviceId ? { device_id: deviceId } : {}) }).expect(201)).body
      .data;

  it('creates a trip as a draft with every field', async () => {
    const body = {
      name: 'Cargo run',
      description: 'd',
      gps_logging_enabled: true,
      weight_kg: 1200.5,
      notes: 'n',
      tags: ['a', 'b'],
    };
    const response = await api.post('/v1/trips', body).expect(201);
    expect(response.body.data).toEqual({
      id: expect.any(String),
      ...body,
      status: 'draft',
      device_id: null,
      category_id: null,
      origin_id: null,
      destination_id: null,
      start_latitude: null,
      start_longitude: null,
      end_latitude: null,
      end_longitude: null,
      started_at: null,
      ended_at: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
  });

  it('ignores a status in the create body and defaults gps_logging_enabled to false', async () => {
    const response = await api.post('/v1/trips', unchecked({ name: 'x', status: 'active' })).expect(201);
    expect(response.body.data).toMatchObject({ status: 'draft', gps_logging_enabled: false, tags: [] });
  });

  it.each([
    [{}, "Body field 'name' is required", 'request.validation'],
    [{ name: 'x', device_id: UNKNOWN_ID }, 'device_id does not name an existing device', 'database.missing_reference'],
    [
      { name: 'x', category_id: UNKNOWN_ID },
      'category_id does not name an existing trip category',
      'database.missing_reference',
    ],
    [
      { name: 'x', origin_id: UNKNOWN_ID },
      'origin_id does not name an existing location',
      'database.missing_reference',
    ],
    [{ name: 'x', weight_kg: -1 }, "Body field 'weight_kg' must be >= 0", 'request.validation'],
  ])('rejects %j with 400', async (body, message, code) => {
    const response = await api.post('/v1/trips', unchecked(body)).expect(400);
    expect(response.body).toEqual({ error: 'BadRequest', message, code });
  });

  it('walks draft → active → paused → active → completed, stamping times and history', async () => {
    t.clock.advance(HOUR);
    onTestFinished(() => t.clock.advance(-HOUR));
    const device = await newDevice();
    await sendPoint(device, 1_800_000_000);
    const trip = await newTrip({ device_id: device });

    const activated = await setStatus(trip.id, 'active', { start_latitude: 54.1, start_longitude: 10.2 }).expect(200);
    const started = activated.body.data;
    expect(started).toMatchObject({ status: 'active', start_latitude: 54.1, start_longitude: 10.2, ended_at: null });
    // Stamped by the app's clock (moved an hour ahead in this test), not the wall clock.
    expect(Date.parse(started.started_at!)).toBeGreaterThan(Date.now() + HOUR - 60_000);

    expect((await setStatus(trip.id, 'paused').expect(200)).body.data.status).toBe('paused');
    const resumed = (await setStatus(trip.id, 'active').expect(200)).body.data;
    expect(resumed.started_at).toBe(started.started_at); // resuming keeps the first start
    const completed = (await setStatus(trip.id, 'completed', { end_latitude: 54.4, end_longitude: 11.1 }).expect(200))
      .body.data;
    expect(completed.status).toBe('completed');
    expect(Date.parse(completed.ended_at!)).toBeGreaterThan(Date.now() + HOUR - 60_000);
    expect(completed.ended_at).not.toBeNull();

    const history = await api.get(`/v1/trips/${trip.id}/history`).expect(200);
    expect(history.body).toEqual([
      expect.objectContaining({
        trip_id: trip.id,
        old_status: 'draft',
        new_status: 'active',
        changed_by: adminId,
        latitude: 54.1,
        longitude: 10.2,
      }),
      expect.objectContaining({
        old_status: 'active',
        new_status: 'paused',
        latitude: POINT.latitude,
        longitude: POINT.longitude,
      }),
      expect.objectContaining({ old_status: 'paused', new_status: 'active', latitude: POINT.latitude }),
      expect.objectContaining({ old_status: 'active', new_status: 'completed', latitude: 54.4, longitude: 11.1 }),
    ]);
    const times = history.body.map((entry: { changed_at: string }) => Date.parse(entry.changed_at));
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });

  it('records no position when neither the request nor a device gives one', async () => {
    const trip = await newTrip();
    await setStatus(trip.id, 'active');
    expect((await api.get(`/v1/trips/${trip.id}/history`).expect(200)).body[0]).toMatchObject({
      latitude: null,
      longitude: null,
    });
  });

  it.each([
    [[], 'paused', 'A trip cannot go from draft to paused', 'trip.invalid_transition'],
    [[], 'completed', 'A trip cannot go from draft to completed', 'trip.invalid_transition'],
    [[], 'draft', 'A trip cannot go from draft to draft', 'trip.invalid_transition'],
    [['active'], 'draft', 'A trip cannot go from active to draft', 'trip.invalid_transition'],
    [['active'], 'active', 'A trip cannot go from active to active', 'trip.invalid_transition'],
    [['active', 'completed'], 'active', 'A trip cannot go from completed to active', 'trip.invalid_transition'],
    [['active', 'paused'], 'paused', 'A trip cannot go from paused to paused', 'trip.invalid_transition'],
  ])('after %j refuses status %s with 400 and changes nothing', async (path, status, message, code) => {
    const trip = await newTrip();
    for (const step of path) expect((await setStatus(trip.id, step)).status).toBe(200);
    const before = (await api.get(`/v1/trips/${trip.id}`).expect(200)).body.data;
    const response = await setStatus(trip.id, status, { name: 'renamed' });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: 'BadRequest', message, code });
    expect((await api.get(`/v1/trips/${trip.id}`).expect(200)).body.data).toEqual(before);
    expect((await api.get(`/v1/trips/${trip.id}/history`)).body).toHaveLength(path.length);
  });

  it('refuses a second active GPS-logging trip on the same device with 409, also when resuming', async () => {
    const device = await newDevice();
    const first = await newTrip({ device_id: device, gps_logging_enabled: true });
    const second = await newTrip({ device_id: device, gps_logging_enabled: true });
    const notLogging = await newTrip({ device_id: device });
    expect((await setStatus(first.id, 'active')).status).toBe(200);
    const conflict = await setStatus(second.id, 'active');
    expect(conflict.status).toBe(409);
    expect(conflict.body).toEqual({
      error: 'Conflict',
      message: 'Another active trip is already logging GPS on this device',
      code: 'trip.logging_conflict',
    });
    expect((await setStatus(notLogging.id, 'active')).status).toBe(200);

    expect((await setStatus(first.id, 'paused')).status).toBe(200);
    expect((await setStatus(second.id, 'active')).status).toBe(200);
    expect((await setStatus(first.id, 'active')).status).toBe(409);
  });

  it('lets exactly one of two concurrent activations on one device succeed', async () => {
    const device = await newDevice();
    const trips = await Promise.all([1, 2, 3].map(() => newTrip({ device_id: device, gps_logging_enabled: true })));
    const responses = await Promise.all(trips.map((trip) => setStatus(trip.id, 'active')));
    expect(responses.map((r) => r.status).sort()).toEqual([200, 409, 409]);
    const active = await t.database.db
      .selectFrom('trips')
      .select('id')
      .where('device_id', '=', device)
      .where('status', '=', 'active')
      .execute();
    expect(active).toHaveLength(1);
  });

  it('links new points of the device to its active logging trip, and lists them oldest first', async () => {
    const device = await newDevice();
    const trip = await newTrip({ device_id: device, gps_logging_enabled: true });
    const before = await sendPoint(device, 1_700_000_000);
    expect(before.trip_id).toBeNull();
    await setStatus(trip.id, 'active');
    const later = await sendPoint(device, 1_700_000_200);
    const earlier = await sendPoint(device, 1_700_000_100);
    expect(later.trip_id).toBe(trip.id);
    const page = (await api.get(`/v1/trips/${trip.id}/gps`).expect(200)).body;
    expect(page.data.map((p: { id: string }) => p.id)).toEqual([earlier.id, later.id]);
    expect(page.pagination).toEqual({ page: 1, limit: 10, total: 2, total_pages: 1 });

    await setStatus(trip.id, 'paused');
    expect((await sendPoint(device, 1_700_000_300)).trip_id).toBeNull();
  });

  it('deletes only draft and completed trips; the points of a deleted trip stay', async () => {
    const device = await newDevice();
    const trip = await newTrip({ device_id: device, gps_logging_enabled: true });
    await setStatus(trip.id, 'active');
    const point = await sendPoint(device, 1_750_000_000);
    const refused = await api.delete(`/v1/trips/${trip.id}`).expect(409);
    expect(refused.body).toEqual({
      error: 'Conflict',
      message: 'A active trip cannot be deleted; complete it first',
      code: 'trip.not_deletable',
    });
    expect((await api.delete(`/v1/gps/${point.id}`)).status).toBe(409);
    await setStatus(trip.id, 'paused');
    expect((await api.delete(`/v1/trips/${trip.id}`)).status).toBe(409);
    await setStatus(trip.id, 'completed');
    expect((await api.delete(`/v1/trips/${trip.id}`)).status).toBe(204);
    expect((await api.get(`/v1/trips/${trip.id}`)).status).toBe(404);
    expect((await api.get(`/v1/gps/${point.id}`).expect(200)).body.data.trip_id).toBeNull();
    const draft = await newTrip();
    expect((await api.delete(`/v1/trips/${draft.id}`)).status).toBe(204);
  });

  it('a deleted trip leaves no trip_id on the latest point either', async () => {
    const device = await newDevice();
    const trip = await newTrip({ device_id: device, gps_logging_enabled: true });
    await setStatus(trip.id, 'active');
    const point = await sendPoint(device, 1_760_000_000);
    expect((await api.get(`/v1/gps/current?device_id=${device}`).expect(200)).body.data.trip_id).toBe(trip.id);
    await setStatus(trip.id, 'completed');
    expect((await api.delete(`/v1/trips/${trip.id}`)).status).toBe(204);
    const stored = (await api.get(`/v1/gps/${point.id}`).expect(200)).body.data;
    expect(stored.trip_id).toBeNull();
    expect((await api.get(`/v1/gps/current?device_id=${device}`).expect(200)).body.data).toEqual(stored);
  });

  it('a deleted trip leaves no trip_id on the latest point of a device that logged to it before another took over', async () => {
    const [first, second] = [await newDevice(), await newDevice()];
    const trip = await newTrip({ device_id: first, gps_logging_enabled: true });
    await setStatus(trip.id, 'active');
    const point = await sendPoint(first, 1_765_000_000);
    expect((await api.get(`/v1/gps/current?device_id=${first}`).expect(200)).body.data.trip_id).toBe(trip.id);
    expect((await api.patch(`/v1/trips/${trip.id}`, { device_id: second })).status).toBe(200);
    await setStatus(trip.id, 'completed');
    expect((await api.delete(`/v1/trips/${trip.id}`)).status).toBe(204);
    expect((await api.get(`/v1/gps/current?device_id=${first}`).expect(200)).body.data).toEqual({
      ...point,
      trip_id: null,
    });
  });

  it('filters the list by status, 20 per page by default', async () => {
    const completed = await newTrip();
    await api.patch(`/v1/trips/${completed.id}`, { status: 'active' });
    expect((await api.patch(`/v1/trips/${completed.id}`, { status: 'completed' })).status).toBe(200);
    await newTrip();
    const body = (await api.get('/v1/trips?status=completed').expect(200)).body;
    expect(body.pagination.limit).toBe(20);
    expect(body.data.length).toBeGreaterThan(0);
    expect(body.data.every((trip: { status: string }) => trip.status === 'completed')).toBe(true);
    expect(body.data.map((trip: { id: string }) => trip.id)).toContain(completed.id);
    const lost = await api.get('/v1/trips?status=lost').expect(400);
    expect(lost.body).toEqual({
      error: 'BadRequest',
      message: "Query parameter 'status' must be one of: draft, active, paused, completed",
      code: 'request.validation',
    });
  });

  it('answers 404 for unknown trips on every route and 400 for a PATCH without fields', async () => {
    for (const [method, url] of [
      ['GET', `/v1/trips/${UNKNOWN_ID}`],
      ['PATCH', `/v1/trips/${UNKNOWN_ID}`],
      ['DELETE', `/v1/trips/${UNKNOWN_ID}`],
      ['GET', `/v1/trips/${UNKNOWN_ID}/gps`],
      ['GET', `/v1/trips/${UNKNOWN_ID}/history`],
    ] as const) {
      const response = await api.raw({ method, url, payload: method === 'PATCH' ? { name: 'x' } : undefined });
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ error: 'NotFound', message: 'Trip not found', code: 'trip.not_found' });
    }
    const trip = await newTrip();
    for (const body of [{}, { state: 'active' }]) {
      const refused = await api.patch(`/v1/trips/${trip.id}`, body).expect(400);
      expect(refused.body.message).toMatch(/^Give at least one of: name, description, gps_logging_enabled, /);
    }
  });

  it('needs trips:read, trips:write and trips:delete', async () => {
    expect((await t.as(null).get('/v1/trips')).status).toBe(401);
    const user = (await t.app.services.users.findByUsername('admin'))!;
    expect(user.id).toBe(adminId);
    const plain = await login(t.app, 'admin', TEST_ADMIN.password);
    expect((await t.as(plain).get('/v1/trips')).status).toBe(200);
    await expectPermissionChecks(t.app, admin, [
      { method: 'GET', url: '/v1/trips', permission: 'trips:read' },
      { method: 'GET', url: `/v1/trips/${UNKNOWN_ID}`, permission: 'trips:read' },
      { method: 'GET', url: `/v1/trips/${UNKNOWN_ID}/gps`, permission: 'trips:read' },
      { method: 'GET', url: `/v1/trips/${UNKNOWN_ID}/history`, permission: 'trips:read' },
      { method: 'POST', url: '/v1/trips', permission: 'trips:write', payload: { name: 'x' } },
      { method: 'PATCH', url: `/v1/trips/${UNKNOWN_ID}`, permission: 'trips:write', payload: { name: 'x' } },
      { method: 'DELETE', url: `/v1/trips/${UNKNOWN_ID}`, permission: 'trips:delete' },
    ]);
  });

  it('answers 400 for ids that are not UUIDs', async () => {
    for (const url of ['/v1/trips/not-a-uuid', '/v1/trips/not-a-uuid/gps', '/v1/trips/not-a-uuid/history'] as const) {
      expect((await api.get(url)).body).toEqual({
        error: 'BadRequest',
        message: `Path parameter 'id' must match format "uuid"`,
        code: 'request.validation',
      });
    }
  });
});
