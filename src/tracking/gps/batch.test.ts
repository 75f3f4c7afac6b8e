import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { unchecked, type Client, type Options } from '../../../test/client.js';
import {
  buildTestApp,
  createApiKey,
  deviceWithKey,
  login,
  TEST_ADMIN,
  twoNodes,
  type TestApp,
} from '../../../test/helpers.js';

const POINT = { latitude: 54.32, longitude: 10.14, speed_kmh: 36, speed_mps: 10, speed_mph: 22.37, speed_knots: 19.44 };

/** POST /v1/gps/batch, and idempotent delivery on POST /v1/gps. */
describe('GPS batches', () => {
  let t: TestApp;
  let admin: string;
  let api: Client;
  beforeAll(async () => {
    t = await buildTestApp();
    admin = await login(t.app, 'admin', TEST_ADMIN.password);
    api = t.as(admin);
  });
  afterAll(() => t.close());

  const newDevice = async () =>
    (await api.post('/v1/devices', { name: 'batch tracker' }).expect(201)).body.data.id as string;
  const batch = (payload: unknown, options: Options<'post', '/v1/gps/batch'> = {}) =>
    api.post('/v1/gps/batch', unchecked(payload), options);
  const pointsOf = (deviceId: string) =>
    t.database.db.selectFrom('gps_points').selectAll().where('device_id', '=', deviceId).orderBy('timestamp').execute();

  // It spies on one node's store: on two nodes either batch may land on the other, whose publish it does not see.
  it.skipIf(twoNodes)(
    'does not build or publish the gps channel message of a large batch when no node listens',
    async () => {
      const published = vi.spyOn(t.kv, 'publish');
      try {
        const points = Array.from({ length: 100 }, (_, i) => ({ ...POINT, timestamp: 1_767_300_000 + i }));
        expect((await batch(points)).body).toEqual({ stored: 100, duplicates: 0, refused: [] });
        // One more point: published without asking, so the batch's turn has passed once it is.
        expect((await batch([{ ...POINT, timestamp: 1_767_300_100 }])).body).toMatchObject({ stored: 1 });
        await vi.waitFor(() =>
          expect(published.mock.calls.filter(([channel]) => channel === 'ws:points:v3')).toHaveLength(1),
        );
        expect(published.mock.calls.find(([channel]) => channel === 'ws:points:v3')![1].split('\n')).toHaveLength(1);
      } finally {
        published.mockRestore();
      }
    },
  );

  it('stores the valid points, lists the refused ones by index and field, and counts resent points as duplicates', async () => {
    const device = await newDevice();
    const points = [
      {
        ...POINT,
        timestamp: 1_767_225_600,
        device_id: device,
        accuracy: 8,
        battery_level: 87,
        charging: true,
        motion: 'driving',
        alarm: 'sos',
      },
      { ...POINT, latitude: 91, timestamp: 1_767_225_601, device_id: device },
      { ...POINT, timestamp: 1_767_225_602, device_id: device },
      { ...POINT, speed_knots: undefined, timestamp: 1_767_225_603, device_id: device },
      { ...POINT, timestamp: 1_767_225_604, device_id: '00000000-0000-4000-8000-000000000000' },
    ];
    const first = await batch(points);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      stored: 2,
      duplicates: 0,
      refused: [
        { index: 1, field: 'latitude', message: "Body field 'latitude' must be <= 90" },
        { index: 3, field: 'speed_knots', message: "Body field 'speed_knots' is required" },
        { index: 4, field: 'device_id', message: 'device_id does not name an existing device' },
      ],
    });
    const stored = await pointsOf(device);
    expect(
      stored.map((p) => [p.timestamp.toISOString(), p.accuracy, p.battery_level, p.charging, p.motion, p.alarm]),
    ).toEqual([
      ['2026-01-01T00:00:00.000Z', 8, 87, true, 'driving', 'sos'],
      ['2026-01-01T00:00:02.000Z', null, null, null, null, null],
    ]);
    // The same batch again (a lost answer): nothing new.
    expect((await batch(points)).body).toMatchObject({ stored: 0, duplicates: 2 });
    expect(await pointsOf(device)).toHaveLength(2);
  });

  it('takes NDJSON, refusing a line that is not JSON on its own', async () => {
    const device = await newDevice();
    const lines = [
      JSON.stringify({ ...POINT, timestamp: 1_767_225_700, device_id: device }),
      '{not json',
      '',
      JSON.stringify({ ...POINT, timestamp: 1_767_225_701, device_id: device }),
    ];
    const response = await batch(lines.join('\n'), { headers: { 'content-type': 'application/x-ndjson' } });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      stored: 2,
      duplicates: 0,
      refused: [{ index: 1, field: '', message: 'Line 2 is not JSON' }],
    });
  });

  it('with all_or_nothing=true stores nothing when a point is refused, answering 400 with the list', async () => {
    const device = await newDevice();
    const points = [
      { ...POINT, timestamp: 1_767_225_800, device_id: device },
      { ...POINT, timestamp: 1_767_225_801, device_id: '00000000-0000-4000-8000-000000000000' },
    ];
    const refused = await batch(points, { query: { all_or_nothing: true } });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({
      error: 'BadRequest',
      message: 'Some points were refused; with all_or_nothing=true none was stored',
      code: 'gps.batch_refused',
      refused: [{ index: 1, field: 'device_id', message: 'device_id does not name an existing device' }],
    });
    expect(await pointsOf(device)).toHaveLength(0);
    expect((await batch(points.slice(0, 1), { query: { all_or_nothing: true } })).body).toEqual({
      stored: 1,
      duplicates: 0,
      refused: [],
    });
  });

  it('refuses more than 10,000 points and a body that is not a list', async () => {
    const many = Array.from({ length: 10_001 }, (_, i) => ({ ...POINT, timestamp: 1_767_000_000 + i }));
    const tooMany = await batch(many).expect(400);
    expect(tooMany.body.code).toBe('request.validation');
    expect((await batch({ ...POINT, timestamp: 1 }).expect(400)).body.code).toBe('request.validation');
  });

  it('puts points without device_id on the device linked to the key, and needs gps:write', async () => {
    const { key, deviceId: device } = await deviceWithKey(t.app, admin, { name: 'batch key' });
    const response = await t.as(key).post('/v1/gps/batch', [{ ...POINT, timestamp: 1_767_225_900 }]);
    expect(response.body).toEqual({ stored: 1, duplicates: 0, refused: [] });
    expect(await pointsOf(device)).toHaveLength(1);
    const reader = await createApiKey(t.app, admin, { name: 'reader', scopes: ['gps:read'] });
    expect((await t.as(reader.key).post('/v1/gps/batch', [])).status).toBe(403);
    expect((await t.as(null).post('/v1/gps/batch', [])).status).toBe(401);
  });

  it("puts the points of a batch on their device's logging trip, counting each once, and makes the newest the latest", async () => {
    const [logged, other] = [await newDevice(), await newDevice()];
    const trip = (
      await api.post('/v1/trips', { name: 'batch trip', device_id: logged, gps_logging_enabled: true }).expect(201)
    ).body.data;
    expect((await api.patch(`/v1/trips/${trip.id}`, { status: 'active' })).status).toBe(200);
    const points = [3, 1, 2].flatMap((offset) =>
      [logged, other].map((device_id) => ({ ...POINT, timestamp: 1_767_227_000 + offset, device_id })),
    );
    expect((await batch(points)).body).toEqual({ stored: 6, duplicates: 0, refused: [] });
    expect((await batch(points)).body).toEqual({ stored: 0, duplicates: 6, refused: [] });
    expect((await pointsOf(logged)).map((p) => p.trip_id)).toEqual([trip.id, trip.id, trip.id]);
    expect((await pointsOf(other)).map((p) => p.trip_id)).toEqual([null, null, null]);
    const counted = await api.get(`/v1/trips/${trip.id}/gps`).expect(200);
    expect(counted.body.pagination.total).toBe(3);
    const latest = await api.get(`/v1/gps/current?device_id=${logged}`).expect(200);
    expect(latest.body.data).toMatchObject({ timestamp: '2026-01-01T00:23:23.000Z', trip_id: trip.id });
  });

  it('stores a point of POST /v1/gps once however often it is retried, answering each retry with the first point', async () => {
    const device = await newDevice();
    const send = () => api.post('/v1/gps', { ...POINT, timestamp: 1_767_226_000, device_id: device }).expect(201);
    const [a, b] = await Promise.all([send(), send()]);
    const c = await send();
    for (const response of [a, b, c]) expect(response.status).toBe(201);
    expect(new Set([a, b, c].map((r) => r.body.data.id)).size).toBe(1);
    expect(c.body.data).toEqual(a.body.data);
    expect(await pointsOf(device)).toHaveLength(1);
  });
});
