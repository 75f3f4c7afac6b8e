import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '../../../test/client.js';
import {
  bearer,
  buildTestApp,
  createApiKey,
  deviceWithKey,
  login,
  TEST_ADMIN,
  UNAUTHORIZED,
  type TestApp,
} from '../../../test/helpers.js';
import { openSocket } from '../../../test/ws-client.js';
import { speedsFrom } from './trackers.js';

/**
 * Tracker apps, replaying the requests each sends when set up as docs/gps.md ("Tracker apps") says (the
 * device identifier or password replaced by an API key, the one thing a user types in differently).
 */
describe('tracker apps', () => {
  let t: TestApp;
  let admin: string;
  let api: Client;
  beforeAll(async () => {
    t = await buildTestApp({ captureLogs: true });
    admin = await login(t.app, 'admin', TEST_ADMIN.password);
    api = t.as(admin);
  });
  afterAll(() => t.close());

  /** A key with gps:write linked to a new device. */
  async function phone() {
    const { key, deviceId: device } = await deviceWithKey(t.app, admin, { name: 'phone' });
    const points = () =>
      t.database.db.selectFrom('gps_points').selectAll().where('device_id', '=', device).orderBy('timestamp').execute();
    return { key, device, points };
  }
  /** The tracker's request byte for byte, with only the headers it sends (its credential is in them or the body). */
  const post = (url: string, payload: string, headers: Record<string, string>) =>
    t.as(null).raw({ method: 'POST', url, payload, headers });
  const form = { 'content-type': 'application/x-www-form-urlencoded' };

  describe('Traccar Client', () => {
    it('10.x: a form post is stored field by field (speed in knots), answered 200 with an empty body, and once however often it is resent', async () => {
      const { key, points } = await phone();
      const body = `id=${key}&lat=52.520008&lon=13.404954&timestamp=1760000000&accuracy=12.0&altitude=34.0&speed=5.83&bearing=270.0&batt=87&charge=false&battery_health=good&battery_voltage=4123&battery_temp=28.5`;
      const first = await post('/v1/ingest/osmand', body, form);
      expect([first.status, first.text]).toEqual([200, '']);
      expect((await post('/v1/ingest/osmand', body, form)).status).toBe(200);
      const stored = await points();
      expect(stored).toHaveLength(1);
      expect(stored[0]).toMatchObject({
        latitude: 52.520008,
        longitude: 13.404954,
        timestamp: new Date('2025-10-09T08:53:20Z'),
        accuracy: 12,
        altitude: 34,
        heading: 270,
        ...speedsFrom(5.83, 'knots'),
        speed_knots: 5.83,
        battery_level: 87,
        charging: false,
        alarm: null,
        trip_id: null,
      });
      expect([stored[0]!.speed_mps, stored[0]!.speed_kmh, stored[0]!.speed_mph]).toEqual([
        expect.closeTo(2.99921, 5),
        expect.closeTo(10.79716, 5),
        expect.closeTo(6.70904, 5),
      ]);
    });

    it('9.x: the JSON body (speed in m/s, -1 unknown, battery 0..1, ISO time with milliseconds)', async () => {
      const { key, points } = await phone();
      const body =
        '{"location":{"timestamp":"2025-06-15T13:45:12.862Z","coords":{"latitude":37.4219983,"longitude":-122.084,"accuracy":5,"speed":0,"heading":-1,"altitude":5},"is_moving":false,"odometer":0,"event":"motionchange","battery":{"level":1,"is_charging":false},"activity":{"type":"still"},"extras":{},"_":"&id=48241179&lat=37.4219983&lon=-122.084&timestamp=2025-06-15T13:45:12.862Z&"},"device_id":"48241179"}'.replaceAll(
          '48241179',
          key,
        );
      const response = await post('/v1/ingest/osmand', body, { 'content-type': 'application/json' });
      expect(response.status).toBe(200);
      expect(await points()).toMatchObject([
        {
          latitude: 37.4219983,
          longitude: -122.084,
          timestamp: new Date('2025-06-15T13:45:12.862Z'),
          accuracy: 5,
          altitude: 5,
          heading: null,
          speed_mps: 0,
          speed_kmh: 0,
          speed_mph: 0,
          speed_knots: 0,
          battery_level: 100,
          charging: false,
          motion: 'still',
        },
      ]);
    });

    it("opt-in JSON batches: an array of 9.x bodies, and batchSync's one body with an array of locations, each stored once", async () => {
      const { key, points } = await phone();
      const location = (second: number, latitude: number) =>
        `{"timestamp":"2025-06-15T13:45:${second}.862Z","coords":{"latitude":${latitude},"longitude":-122.084,"accuracy":5,"speed":2,"heading":-1,"altitude":5},"is_moving":true,"odometer":0,"battery":{"level":0.5,"is_charging":true},"activity":{"type":"walking"},"extras":{}}`;
      const array = `[{"location":${location(10, 37.1)},"device_id":"${key}"},{"location":${location(11, 37.2)},"device_id":"${key}"}]`;
      expect((await post('/v1/ingest/osmand', array, { 'content-type': 'application/json' })).status).toBe(200);
      const batchSync = `{"location":[${location(11, 37.2)},${location(12, 37.3)}],"device_id":"${key}"}`;
      expect((await post('/v1/ingest/osmand', batchSync, { 'content-type': 'application/json' })).status).toBe(200);
      expect(await points()).toMatchObject(
        [37.1, 37.2, 37.3].map((latitude, i) => ({
          latitude,
          timestamp: new Date(`2025-06-15T13:45:1${i}.862Z`),
          speed_mps: 2,
          battery_level: 50,
          charging: true,
          motion: 'walking',
        })),
      );
    });

    it('classic apps: every field in the query string of a POST with an empty body; a heartbeat without a position stores nothing', async () => {
      const { key, points } = await phone();
      const response = await t.as(null).raw({
        method: 'POST',
        url: `/v1/ingest/osmand?id=${key}&timestamp=619315200&lat=0.0&lon=0.0&speed=0.0&bearing=0.0&altitude=0.0&accuracy=0.0&batt=0.0`,
      });
      expect(response.status).toBe(200);
      expect((await post('/v1/ingest/osmand', `id=${key}&timestamp=1760000000&batt=80&charge=true`, form)).status).toBe(
        200,
      );
      expect((await post('/v1/ingest/osmand', `id=${key}&notificationToken=abc`, form)).status).toBe(200);
      expect(await points()).toMatchObject([
        {
          latitude: 0,
          longitude: 0,
          timestamp: new Date('1989-08-17T00:00:00Z'),
          speed_knots: 0,
          heading: 0,
          battery_level: 0,
        },
      ]);
    });

    it('reads timestamps as seconds, milliseconds, ISO 8601 with a zone or without one (UTC), and location=lat,lon', async () => {
      const { key, points } = await phone();
      const get = (query: string) => t.as(null).raw({ method: 'GET', url: `/v1/ingest/osmand?id=${key}&${query}` });
      expect((await get('lat=1&lon=1&timestamp=1760000000123')).status).toBe(200);
      expect((await get('lat=2&lon=2&timestamp=2025-06-15T15:45:12%2B02:00')).status).toBe(200);
      expect((await get('location=3,3&timestamp=2025-06-15%2013:45:13&speed=-1&alarm=sos')).status).toBe(200);
      expect((await points()).map((p) => [p.latitude, p.timestamp.toISOString(), p.speed_knots, p.alarm])).toEqual([
        [2, '2025-06-15T13:45:12.000Z', null, null],
        [3, '2025-06-15T13:45:13.000Z', null, 'sos'],
        [1, '2025-10-09T08:53:20.123Z', null, null],
      ]);
      const bad = await get('lat=95&lon=1');
      expect([bad.status, bad.body.code, bad.body.message]).toEqual([
        400,
        'gps.invalid_point',
        "Field 'lat' must be between -90 and 90",
      ]);
      expect((await get('lat=1&lon=1&timestamp=yesterday')).body.message).toBe(
        "Field 'timestamp' must be Unix seconds, milliseconds or an ISO 8601 time",
      );
    });

    it('a form post with location=lat,lon is stored (a form is never 9.x JSON), and a repeated one by its last value', async () => {
      const { key, points } = await phone();
      const response = await post(
        '/v1/ingest/osmand',
        `id=${key}&location=52.520008,13.404954&timestamp=1760000000&speed=5.83&batt=87`,
        form,
      );
      expect([response.status, response.text]).toEqual([200, '']);
      expect(
        (await post('/v1/ingest/osmand', `id=${key}&location=1,1&location=52.6,13.5&timestamp=1760000001`, form))
          .status,
      ).toBe(200);
      expect((await points()).map((p) => [p.latitude, p.longitude, p.timestamp.toISOString(), p.speed_knots])).toEqual([
        [52.520008, 13.404954, '2025-10-09T08:53:20.000Z', 5.83],
        [52.6, 13.5, '2025-10-09T08:53:21.000Z', null],
      ]);
      const bad = await post('/v1/ingest/osmand', `id=${key}&location=52.5&timestamp=1760000002`, form);
      expect([bad.status, bad.body]).toEqual([
        400,
        { error: 'BadRequest', message: "Field 'location' is required", code: 'gps.invalid_point' },
      ]);
    });

    it('refuses a JSON position it cannot read instead of answering 200: a location without coords, a batch item that is no object', async () => {
      const { key, points } = await phone();
      const json = { 'content-type': 'application/json' };
      const flat = await post(
        '/v1/ingest/osmand',
        JSON.stringify({
          device_id: key,
          location: { timestamp: '2025-06-15T13:45:12.862Z', latitude: 37.42, longitude: -122.08 },
        }),
        json,
      );
      expect([flat.status, flat.body.message]).toEqual([
        400,
        "Field 'location.coords' is required (latitude and longitude go in it)",
      ]);
      const strings = await post(
        '/v1/ingest/osmand',
        JSON.stringify({ device_id: key, location: ['37.42,-122.08'] }),
        json,
      );
      expect([strings.status, strings.body.message]).toEqual([400, "Field 'location[0]' must be an object"]);
      expect(
        (
          await post(
            '/v1/ingest/osmand',
            JSON.stringify([
              {
                device_id: key,
                location: { timestamp: '2025-06-15T13:45:12.862Z', coords: { latitude: 1, longitude: 1 } },
              },
              7,
            ]),
            json,
          )
        ).body.message,
      ).toBe("Field '[1]' must be an object");
      // A 9.x body without coordinates (no fix yet) is a heartbeat: 200, nothing stored.
      expect(
        (
          await post(
            '/v1/ingest/osmand',
            JSON.stringify({
              device_id: key,
              location: { timestamp: '2025-06-15T13:45:12.862Z', battery: { level: 0.5 } },
            }),
            json,
          )
        ).status,
      ).toBe(200);
      expect(await points()).toHaveLength(0);
    });

    it('GPSLogger: the documented custom URL (speed in m/s, %HDOP empty)', async () => {
      const { key, points } = await phone();
      const url = `/v1/ingest/osmand?key=${key}&lat=12.193&lon=19.111&timestamp=1457205869&altitude=45.0&accuracy=8.0&bearing=359.0&speed_mps=9.0&batt=91.0&charge=true&hdop=`;
      expect((await t.as(null).raw({ method: 'GET', url })).status).toBe(200);
      expect(await points()).toMatchObject([
        {
          latitude: 12.193,
          longitude: 19.111,
          altitude: 45,
          accuracy: 8,
          heading: 359,
          speed_mps: 9,
          speed_kmh: 32.4,
          battery_level: 91,
          charging: true,
          hdop: null,
        },
      ]);
    });

    it('answers 401 without a key or with an unknown one, 403 to a key without gps:write or without a device, and never logs the key', async () => {
      const { key } = await phone();
      const point = 'lat=1&lon=1&timestamp=1760000000';
      expect((await post('/v1/ingest/osmand', point, form)).body).toEqual(UNAUTHORIZED);
      expect((await post('/v1/ingest/osmand', `id=48241179&${point}`, form)).status).toBe(401);
      expect((await t.as(null).raw({ method: 'GET', url: `/v1/ingest/osmand?id=wg_nothing&${point}` })).status).toBe(
        401,
      );
      const reader = await createApiKey(t.app, admin, { name: 'reader', scopes: ['gps:read'] });
      expect((await post('/v1/ingest/osmand', `id=${reader.key}&${point}`, form)).body.code).toBe('auth.forbidden');
      const loose = await createApiKey(t.app, admin, { name: 'no device', scopes: ['gps:write'] });
      const unlinked = await post('/v1/ingest/osmand', `id=${loose.key}&${point}`, form);
      expect([unlinked.status, unlinked.body.code]).toEqual([403, 'gps.no_device_for_credential']);
      // A session's point lands on no device named by the client either.
      expect((await api.raw({ method: 'GET', url: `/v1/ingest/osmand?${point}` })).body.code).toBe(
        'gps.no_device_for_credential',
      );
      await t.as(null).raw({ method: 'GET', url: `/v1/ingest/osmand?id=${key}&lat=1&lon=1&timestamp=1760000001` });
      expect(JSON.stringify(t.logs())).not.toContain(key);
    });
  });

  describe('OwnTracks', () => {
    const message =
      '{"_type":"location","topic":"owntracks/jane/pixel7","qos":1,"retained":true,"created_at":1718370000,"_id":"a1b2c3d4","source":"fused","t":"u","batt":80,"bs":1,"acc":12,"lat":48.856826,"lon":2.292713,"alt":35,"vel":4,"cog":270,"tst":1718369990,"m":1,"conn":"w","inregions":[],"tid":"p7"}';
    const headers = (password: string) => ({
      'content-type': 'application/json; charset=utf-8',
      'user-agent': 'Owntracks-Android/gms/420500',
      authorization: `Basic ${Buffer.from(`jane:${password}`).toString('base64')}`,
      'x-limit-u': 'jane',
      'x-limit-d': 'pixel7',
    });

    it('stores a location (vel in km/h, bs) with the key as Basic password, answers [] and stores a resent message once', async () => {
      const { key, points } = await phone();
      for (let i = 0; i < 2; i++) {
        const response = await post('/v1/ingest/owntracks', message, headers(key));
        expect([response.status, response.headers['content-type'], response.body]).toEqual([
          200,
          'application/json; charset=utf-8',
          [],
        ]);
      }
      expect(await points()).toMatchObject([
        {
          latitude: 48.856826,
          longitude: 2.292713,
          timestamp: new Date(1718369990 * 1000),
          accuracy: 12,
          altitude: 35,
          heading: 270,
          speed_kmh: 4,
          speed_mps: 4 / 3.6,
          speed_knots: 4 / 3.6 / (1852 / 3600),
          battery_level: 80,
          charging: false,
        },
      ]);
    });

    it('answers every other message, and an empty body, 200 [] without storing it', async () => {
      const { key, points } = await phone();
      const others = [
        '{"_type":"transition","event":"enter","desc":"Home","tid":"p7","t":"c","tst":1718369990,"wtst":1718300000,"acc":12,"lat":48.85,"lon":2.29,"rid":"r1"}',
        '{"_type":"waypoint","desc":"Home","lat":48.85,"lon":2.29,"tst":1718300000,"rad":50}',
        '{"_type":"waypoints","waypoints":[]}',
        '{"_type":"status","android":{}}',
        '{"_type":"lwt","tst":1718369990}',
        '{"_type":"card","name":"Jane"}',
        '{"_type":"encrypted","data":"abc"}',
        '',
      ];
      for (const body of others) {
        const response = await post('/v1/ingest/owntracks', body, headers(key));
        expect([response.status, response.body]).toEqual([200, []]);
      }
      expect(await points()).toHaveLength(0);
    });

    it('refuses a location that cannot be stored with 400 naming the field (never 200 [] as if delivered)', async () => {
      const { key, points } = await phone();
      const refusals = [
        ['{"_type":"location","lat":200,"lon":2.29,"tst":1718369990}', "Field 'lat' must be between -90 and 90"],
        ['{"_type":"location","lat":48.85,"lon":2.29}', "Field 'tst' is required"],
        // Without _type (GPSLogger's JSON to this URL), a message with a position is a location.
        ['{"lat":48.85,"lon":2.29,"vel":1.2}', "Field 'tst' is required"],
      ];
      for (const [body, refusal] of refusals) {
        const response = await post('/v1/ingest/owntracks', body!, headers(key));
        expect([response.status, response.body]).toEqual([
          400,
          { error: 'BadRequest', message: refusal, code: 'gps.invalid_point' },
        ]);
      }
      expect(await points()).toHaveLength(0);
      const untyped = await post(
        '/v1/ingest/owntracks',
        '{"lat":52.52,"lon":13.405,"tst":1718369990,"vel":1.2,"batt":91.0}',
        headers(key),
      );
      expect([untyped.status, untyped.body]).toEqual([200, []]);
      expect(await points()).toMatchObject([{ latitude: 52.52, longitude: 13.405, speed_kmh: 1.2, battery_level: 91 }]);
    });

    it('answers 401 to a wrong password or none', async () => {
      expect((await post('/v1/ingest/owntracks', message, headers('secret'))).status).toBe(401);
      expect((await post('/v1/ingest/owntracks', message, { 'content-type': 'application/json' })).status).toBe(401);
    });
  });

  describe('Overland', () => {
    const batch =
      '{"locations":[{"type":"Feature","geometry":{"type":"Point","coordinates":[-122.0305811,37.3318]},"properties":{"timestamp":"2024-10-01T15:00:00Z","altitude":12,"speed":4,"course":90,"horizontal_accuracy":5,"vertical_accuracy":3,"speed_accuracy":0.5,"course_accuracy":10.2,"motion":["driving"],"device_id":"iphone","wifi":"","battery_state":"charging","battery_level":0.8}}]}';

    it('stores a batch with the key as Bearer token, answers {"result":"ok"}, and a resent batch stores nothing twice', async () => {
      const { key, points } = await phone();
      const headers = { ...bearer(key), 'content-type': 'application/json' };
      const first = await post('/v1/ingest/overland', batch, headers);
      expect([first.status, first.body]).toEqual([200, { result: 'ok', stored: 1, duplicates: 0 }]);
      expect((await post('/v1/ingest/overland', batch, headers)).body).toEqual({
        result: 'ok',
        stored: 0,
        duplicates: 1,
      });
      expect(await points()).toMatchObject([
        {
          latitude: 37.3318,
          longitude: -122.0305811,
          timestamp: new Date('2024-10-01T15:00:00Z'),
          altitude: 12,
          heading: 90,
          accuracy: 5,
          ...speedsFrom(4, 'mps'),
          speed_kmh: 14.4,
          battery_level: 80,
          charging: true,
          motion: 'driving',
        },
      ]);
    });

    it('skips features that are no position, takes the key as a key parameter, and knows -1 as unknown', async () => {
      const { key, points } = await phone();
      const features = [
        {
          type: 'Feature',
          geometry: { type: 'Point', coordinates: [10, 50] },
          properties: {
            timestamp: '2024-10-01T15:00:00Z',
            speed: -1,
            course: -1,
            battery_level: -1,
            battery_state: 'unknown',
          },
        },
        { type: 'Feature', properties: { action: 'log', timestamp: '2024-10-01T15:00:01Z' } },
        {
          type: 'Feature',
          geometry: { type: 'Point', coordinates: [10, 50] },
          properties: { type: 'trip', mode: 'car', start: '2024-10-01T14:00:00Z' },
        },
      ];
      const response = await post(`/v1/ingest/overland?key=${key}`, JSON.stringify({ locations: features }), {
        'content-type': 'application/json',
      });
      expect(response.body).toEqual({ result: 'ok', stored: 1, duplicates: 0 });
      expect(await points()).toMatchObject([
        {
          speed_kmh: null,
          speed_mps: null,
          speed_mph: null,
          speed_knots: null,
          heading: null,
          battery_level: null,
          charging: null,
        },
      ]);
      expect((await post('/v1/ingest/overland', batch, { 'content-type': 'application/json' })).status).toBe(401);
      const visit = {
        type: 'Feature',
        geometry: { type: 'Point', coordinates: [-180, -180] },
        properties: { timestamp: '2024-10-01T15:00:02Z', action: 'visit', arrival_date: null },
      };
      const withVisit = await post(`/v1/ingest/overland?key=${key}`, JSON.stringify({ locations: [visit] }), {
        'content-type': 'application/json',
      });
      expect(withVisit.body).toEqual({ result: 'ok', stored: 0, duplicates: 0 });
      const tooMany = JSON.stringify({ locations: Array.from({ length: 1001 }, () => features[0]) });
      expect(
        (await post(`/v1/ingest/overland?key=${key}`, tooMany, { 'content-type': 'application/json' })).body.code,
      ).toBe('request.validation');
    });

    it('refuses a batch holding a location it cannot store with 400 naming it, and stores none of the batch', async () => {
      const { key, points } = await phone();
      const location = (coordinates: unknown, timestamp?: string) => ({
        type: 'Feature',
        geometry: { type: 'Point', coordinates },
        properties: { timestamp, speed: 1 },
      });
      const good = location([10, 50], '2024-10-01T15:00:00Z');
      const refusals: [unknown, string][] = [
        [
          location([10, 95], '2024-10-01T15:00:01Z'),
          "Field 'locations[1].geometry.coordinates[1]' must be between -90 and 90",
        ],
        [
          location([10], '2024-10-01T15:00:01Z'),
          "Field 'locations[1].geometry.coordinates' must be [longitude, latitude]",
        ],
        [location([10, 50]), "Field 'locations[1].properties.timestamp' is required (ISO 8601)"],
        [location([10, 50], 'soon'), "Field 'locations[1].properties.timestamp' must be an ISO 8601 time"],
      ];
      for (const [feature, message] of refusals) {
        const response = await post(`/v1/ingest/overland?key=${key}`, JSON.stringify({ locations: [good, feature] }), {
          'content-type': 'application/json',
        });
        expect([response.status, response.body]).toEqual([
          400,
          { error: 'BadRequest', message, code: 'gps.invalid_point' },
        ]);
      }
      expect(await points()).toHaveLength(0);
    });
  });

  it("delivers a point from Traccar Client to gps WebSocket subscribers, and it joins the device's logging trip", async () => {
    const { key, device } = await phone();
    const trip = (
      await api.post('/v1/trips', { name: 'run', device_id: device, gps_logging_enabled: true }).expect(201)
    ).body.data.id;
    await api.patch(`/v1/trips/${trip}`, { status: 'active' }).expect(200);
    const base = await t.app.listen({ host: '127.0.0.1', port: 0 });
    const socket = await openSocket(base, { headers: bearer(admin) });
    try {
      await socket.next('Welcome');
      await socket.request({ type: 'Subscribe', channel: 'gps', id: 'gps' }, 'Subscribed');
      expect(
        (await post('/v1/ingest/osmand', `id=${key}&lat=54.1&lon=10.1&timestamp=1760000000&speed=10`, form)).status,
      ).toBe(200);
      const message = await socket.next('GpsPoint');
      expect(message.data).toMatchObject({ device_id: device, trip_id: trip, latitude: 54.1, speed_knots: 10 });
      const latest = await api.get('/v1/gps/current', { query: { device_id: device } }).expect(200);
      expect(latest.body.data).toEqual(message.data);
    } finally {
      socket.close();
    }
  });
});
