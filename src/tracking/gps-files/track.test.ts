import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client, Options } from '../../../test/client.js';
import { buildTestApp, login, TEST_ADMIN, UNKNOWN_ID, type TestApp } from '../../../test/helpers.js';

const BASE = 1_767_225_600; // 2026-01-01T00:00:00Z
const iso = (secs: number) => new Date(secs * 1000).toISOString();

type TrackQuery = NonNullable<Options<'get', '/v1/gps/track'>['query']>;

describe('GET /v1/gps/track', () => {
  let t: TestApp;
  let api: Client;
  let device: string;
  beforeAll(async () => {
    t = await buildTestApp();
    api = t.as(await login(t.app, 'admin', TEST_ADMIN.password));
    device = (await api.post('/v1/devices', { name: 'Track' }).expect(201)).body.data.id;
    // Along the equator over one degree: the second and fourth points lie a metre from the one before them.
    const longitudes = [0, 0.00001, 0.5, 0.50001, 1];
    const points = longitudes.map((longitude, i) => ({
      device_id: device,
      latitude: 0,
      longitude,
      timestamp: BASE + i,
      altitude: 0,
      heading: 90,
      speed_kmh: 10 + i,
      speed_mps: 0,
      speed_mph: 0,
      speed_knots: 0,
    }));
    expect((await api.post('/v1/gps/batch', points)).body).toMatchObject({ stored: 5 });
  });
  afterAll(() => t.close());

  const track = (query: Partial<TrackQuery> = {}) =>
    api.get('/v1/gps/track', { query: { device_id: device, ...query } });
  const bounds = { south: 0, west: 0, north: 0, east: 1 };
  const times = (...seconds: number[]) => seconds.map((s) => (BASE + s) * 1000);

  it('answers every point of the range as columns, oldest first', async () => {
    const response = await track().expect(200);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(response.body).toEqual({
      device_id: device,
      total: 5,
      points: 5,
      zoom: null,
      bounds,
      time: times(0, 1, 2, 3, 4),
      latitude: [0, 0, 0, 0, 0],
      longitude: [0, 0.00001, 0.5, 0.50001, 1],
      speed_kmh: [10, 11, 12, 13, 14],
    });
    const ranged = (await track({ from: iso(BASE + 1), to: iso(BASE + 2) }).expect(200)).body;
    expect({ total: ranged.total, time: ranged.time }).toEqual({ total: 2, time: times(1, 2) });
  });

  it('leaves out a point in the same pixel as the one before it at a zoom, or at the zoom that fits a view', async () => {
    const thinned = {
      device_id: device,
      total: 5,
      points: 3,
      zoom: 10,
      bounds,
      time: times(0, 2, 4),
      latitude: [0, 0, 0],
      longitude: [0, 0.5, 1],
      speed_kmh: [10, 12, 14],
    };
    expect((await track({ zoom: 10 })).body).toEqual(thinned);
    // One degree of longitude is 1,820 pixels wide at zoom 11, 910 at zoom 10: a 1,280-pixel view fits it at 10.
    expect((await track({ width: 1280, height: 800 })).body).toEqual(thinned);
    expect((await track({ zoom: 20 })).body).toMatchObject({ points: 5, zoom: 20 });
  });

  it('refuses more than 100,000 points unthinned, and answers at most 100,000 at any zoom', async () => {
    const long = (await api.post('/v1/devices', { name: 'long track' }).expect(201)).body.data.id;
    await sql`insert into gps_points (device_id, latitude, longitude, "timestamp", speed_kmh, speed_mps, speed_mph, speed_knots)
      select ${long}, 0, g / 1e6, ${new Date(BASE * 1000)}::timestamptz + make_interval(secs => g), 0, 0, 0, 0
      from generate_series(1, 100001) as g`.execute(t.database.db);
    const unthinned = await api.get('/v1/gps/track', { query: { device_id: long } });
    expect([unthinned.status, unthinned.body]).toEqual([
      400,
      {
        error: 'BadRequest',
        message:
          'The range holds more than 100,000 points: give zoom (or width and height) to thin it, or a shorter range; GET /v1/gps/export streams any number',
        code: 'gps_file.track_too_long',
      },
    ]);
    const thinned = await api.get('/v1/gps/track', { query: { device_id: long, zoom: 0 } });
    expect(thinned.body).toMatchObject({ total: 100001, points: 2, zoom: 0 });
    // At the largest zoom every point (0.11 m apart, 3 pixels at zoom 22) is a pixel of its own: thinned again to
    // the cap, evenly, the first and last kept.
    const closest = (await api.get('/v1/gps/track', { query: { device_id: long, zoom: 22 } }).expect(200)).body;
    expect({
      total: closest.total,
      points: closest.points,
      zoom: closest.zoom,
      times: closest.time.length,
      longitudes: closest.longitude.length,
    }).toEqual({ total: 100001, points: 100000, zoom: 22, times: 100000, longitudes: 100000 });
    expect([closest.time[0], closest.time.at(-1)]).toEqual(times(1, 100001));
    const gaps = new Set(closest.time.slice(1).map((time, i) => time - closest.time[i]!));
    expect([...gaps].sort()).toEqual([1000, 2000]);
  });

  it('answers an empty range, and refuses an unknown device, a range backwards and a zoom out of bounds', async () => {
    expect((await track({ from: iso(BASE + 100), zoom: 3 })).body).toEqual({
      device_id: device,
      total: 0,
      points: 0,
      zoom: 3,
      bounds: null,
      time: [],
      latitude: [],
      longitude: [],
      speed_kmh: [],
    });
    const unknown = await api.get('/v1/gps/track', { query: { device_id: UNKNOWN_ID } }).expect(404);
    expect(unknown.body.code).toBe('device.not_found');
    const backwards = await track({ from: iso(BASE + 2), to: iso(BASE) }).expect(400);
    expect(backwards.body.code).toBe('gps_file.bad_range');
    for (const zoom of [23, 25]) {
      const refused = await track({ zoom });
      expect([refused.status, refused.body]).toEqual([
        400,
        { error: 'BadRequest', message: "Query parameter 'zoom' must be <= 22", code: 'request.validation' },
      ]);
    }
    expect((await t.as(null).get('/v1/gps/track', { query: { device_id: device } })).status).toBe(401);
  });
});
