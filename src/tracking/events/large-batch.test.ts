import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, login, TEST_ADMIN, type TestApp } from '../../../test/helpers.js';

const SPEEDS = { speed_kmh: 0, speed_mps: 0, speed_mph: 0, speed_knots: 0 };

/**
 * A batch as large as the API takes, every point of it a transition: its events and presence are stored in slices
 * below PostgreSQL's 65,535 parameters a statement (one insert of them all was refused, a 500, found by
 * `npm run bench:geofences`).
 */
describe('geofence events of a full batch', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(() => t.close());

  it('stores 10,000 transitions of one batch, enter and exit in turn', async () => {
    const api = t.as(await login(t.app, 'admin', TEST_ADMIN.password));
    const geofence = { name: 'Harbour', latitude: 54, longitude: 40, radius_km: 1 };
    await api.post('/v1/geofences', geofence).expect(201);
    const device = (await api.post('/v1/devices', { name: 'Ferry' }).expect(201)).body.data.id;
    const start = 1_767_225_600;
    // In and out by 3 km, a second apart.
    const points = Array.from({ length: 10_000 }, (_, i) => ({
      device_id: device,
      latitude: i % 2 === 0 ? 54 : 54.027,
      longitude: 40,
      timestamp: start + i,
      ...SPEEDS,
    }));
    expect((await api.post('/v1/gps/batch', points).expect(200)).body).toMatchObject({ stored: 10_000 });
    const counts = await t.database.db
      .selectFrom('events')
      .select(['type', (eb) => eb.fn.countAll<string>().as('n')])
      .where('device_id', '=', device)
      .groupBy('type')
      .orderBy('type')
      .execute();
    expect(counts.map(({ type, n }) => [type, Number(n)])).toEqual([
      ['geofence_enter', 5000],
      ['geofence_exit', 5000],
    ]);
  });
});
