import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { bearer, buildTestApp, login, TEST_ADMIN, testConfig, type TestApp } from '../../../test/helpers.js';

const POINT = { latitude: 54.32, longitude: 10.14, speed_kmh: 1, speed_mps: 0.28, speed_mph: 0.62, speed_knots: 0.54 };

/** Ingestion under faults and races: what a point may and may not join. */
describe('GPS ingestion', () => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    t = await buildTestApp({ config: { rateLimit: { ...testConfig().rateLimit, gpsWrite: 10_000 } } });
    admin = await login(t.app, 'admin', TEST_ADMIN.password);
  });
  afterAll(() => t.close());

  const call = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
    t.app.inject({ method, url, headers: bearer(admin), payload });
  const newDevice = async () => (await call('POST', '/v1/devices', { name: 'tracker' })).json().data.id as string;

  it('answers 503, not 400, when the database fails while the device is looked up', async () => {
    const device = await newDevice();
    const lookup = vi.spyOn(t.app.services.devices, 'get').mockRejectedValue(new Error('Connection terminated unexpectedly'));
    try {
      const response = await call('POST', '/v1/gps', { ...POINT, timestamp: 1_800_000_000, device_id: device });
      expect(response.statusCode).toBe(503);
      expect(response.json()).toEqual({
        error: 'ServiceUnavailable',
        message: 'The database is unavailable; try again shortly',
        code: 'database.unavailable',
      });
    } finally {
      lookup.mockRestore();
    }
  });

  it('never links a point to a trip that was completed before the point was stored', async () => {
    const device = await newDevice();
    const trip = (await call('POST', '/v1/trips', { name: 'race', device_id: device, gps_logging_enabled: true })).json().data;
    expect((await call('PATCH', `/v1/trips/${trip.id}`, { status: 'active' })).statusCode).toBe(200);
    const sends = Array.from({ length: 20 }, (_, i) => call('POST', '/v1/gps', { ...POINT, timestamp: 1_800_000_000 + i, device_id: device }));
    const completion = call('PATCH', `/v1/trips/${trip.id}`, { status: 'completed' });
    const [completed, ...points] = await Promise.all([completion, ...sends]);
    expect(completed.statusCode).toBe(200);
    expect(points.map((p) => p.statusCode)).toEqual(points.map(() => 201));
    const endedAt = Date.parse(completed.json().data.ended_at);
    // A point that joined the trip was committed before the completion took the trip's lock.
    const linked = points.map((p) => p.json().data).filter((p) => p.trip_id === trip.id);
    for (const point of linked) expect(Date.parse(point.created_at)).toBeLessThanOrEqual(endedAt);
    const listed = (await call('GET', `/v1/trips/${trip.id}/gps?limit=100`)).json();
    expect(listed.pagination.total).toBe(linked.length);
  });
});
