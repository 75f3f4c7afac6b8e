import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { buildTestApp, login, TEST_ADMIN, type TestApp } from '../../../test/helpers.js';

describe('public statistics', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(() => t.close());

  it('counts users, devices, trips by status and GPS points, without credentials', async () => {
    // Exact counts: an app of its own, whatever the other tests of this file created.
    const own = await buildTestApp();
    onTestFinished(() => own.close());
    const admin = await login(own.app, 'admin', TEST_ADMIN.password);
    const api = own.as(admin);
    await api.post('/v1/devices', { name: 'd' });
    const trip = (await api.post('/v1/trips', { name: 'a' }).expect(201)).body.data;
    await api.post('/v1/trips', { name: 'b' });
    await api.patch(`/v1/trips/${trip.id}`, { status: 'active' });
    await api.post('/v1/gps', {
      latitude: 1,
      longitude: 2,
      timestamp: 1_700_000_000,
      speed_kmh: 0,
      speed_mps: 0,
      speed_mph: 0,
      speed_knots: 0,
    });

    const response = await own.as(null).get('/v1/stats/public').expect(200);
    expect(response.body).toEqual({
      users: 1,
      devices: 1,
      trips: { draft: 1, active: 1, paused: 0, completed: 0, total: 2 },
      gps_points: 1,
      generated_at: expect.any(String),
    });
  });

  it('serves the counts from a one-minute cache', async () => {
    const first = (await t.as(null).get('/v1/stats/public')).body;
    await t.database.db.insertInto('devices').values({ name: 'late' }).execute();
    const second = (await t.as(null).get('/v1/stats/public')).body;
    expect(second).toEqual(first);
  });
});
