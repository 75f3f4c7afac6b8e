import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, type Client } from '../../../test/client.js';
import { socketAs } from '../../../test/ws-client.js';
import {
  buildTestApp,
  createUser,
  deviceWithKey,
  login,
  onEveryNode,
  TEST_ADMIN,
  type TestApp,
} from '../../../test/helpers.js';

const SPEEDS = { speed_kmh: 0, speed_mps: 0, speed_mph: 0, speed_knots: 0 };
/** Seconds: a point time of these tests (2026-01-01T00:00:00Z plus the offset). */
const at = (offsetSecs: number) => 1_767_225_600 + offsetSecs;
/** About 1 km north in degrees of latitude. */
const KM = 1 / 111.195;

/**
 * Geofence events evaluated as points arrive (docs/events.md). Geofences made by the admin are instance-wide,
 * so they apply to every device of this app: each test works at a longitude of its own, away from the others.
 */
describe('geofence events', () => {
  let t: TestApp;
  let admin: string;
  let api: Client;
  let area = 0;
  beforeAll(async () => {
    t = await buildTestApp();
    admin = await login(t.app, 'admin', TEST_ADMIN.password);
    api = t.as(admin);
  });
  afterAll(() => t.close());

  /** A longitude no other test uses. */
  const nextArea = () => 20 + ++area;
  const newDevice = async () => (await api.post('/v1/devices', { name: 'walker' }).expect(201)).body.data.id as string;
  const circle = async (longitude: number, body: Record<string, unknown> = {}) =>
    (await api.post('/v1/geofences', { name: 'Home', latitude: 54, longitude, radius_km: 1, ...body }).expect(201)).body
      .data.id as string;
  const point = (deviceId: string, latitude: number, longitude: number, offsetSecs: number, accuracy?: number) => ({
    device_id: deviceId,
    latitude,
    longitude,
    timestamp: at(offsetSecs),
    ...SPEEDS,
    ...(accuracy === undefined ? {} : { accuracy }),
  });
  const batch = async (points: unknown[], via: Client = api) =>
    (await via.post('/v1/gps/batch', points as never).expect(200)).body;
  const eventsOf = (deviceId: string) =>
    t.database.db
      .selectFrom('events')
      .select(['type', 'geofence_id', 'occurred_at', 'source', 'details'])
      .where('device_id', '=', deviceId)
      .orderBy('occurred_at')
      .orderBy('type')
      .execute();
  const kinds = async (deviceId: string) =>
    (await eventsOf(deviceId)).map((event) => [event.type, event.occurred_at.getTime() / 1000 - at(0)]);

  it('fires enter and exit for a circle, once each however the points come', async () => {
    const lon = nextArea();
    const device = await newDevice();
    const fence = await circle(lon);
    await batch([point(device, 54 + 3 * KM, lon, 0), point(device, 54, lon, 60), point(device, 54.0001, lon, 120)]);
    await api.post('/v1/gps', point(device, 54 + 3 * KM, lon, 180)).expect(201);
    // Sent again: stored before, evaluated before.
    await batch([point(device, 54, lon, 60), point(device, 54 + 3 * KM, lon, 180)]);
    expect(await kinds(device)).toEqual([
      ['geofence_enter', 60],
      ['geofence_exit', 180],
    ]);
    const [enter] = await eventsOf(device);
    expect(enter).toMatchObject({ geofence_id: fence, source: 'server', details: { geofence_name: 'Home' } });
  });

  it('fires for a polygon, not inside its hole', async () => {
    const lon = nextArea();
    const device = await newDevice();
    const ring = (size: number) => [
      [lon - size, 54 - size],
      [lon + size, 54 - size],
      [lon + size, 54 + size],
      [lon - size, 54 + size],
      [lon - size, 54 - size],
    ];
    const fence = (
      await api
        .post('/v1/geofences', { name: 'Yard', polygon: { type: 'Polygon', coordinates: [ring(0.02), ring(0.005)] } })
        .expect(201)
    ).body.data.id;
    await batch([
      point(device, 54, lon, 0), // in the hole: outside
      point(device, 54.01, lon, 60), // between the rings: inside
      point(device, 54.001, lon + 0.001, 120), // in the hole again: outside
      point(device, 54.05, lon, 180), // beyond the outer ring
    ]);
    expect(await kinds(device)).toEqual([
      ['geofence_enter', 60],
      ['geofence_exit', 120],
    ]);
    expect((await eventsOf(device))[0]!.geofence_id).toBe(fence);
  });

  it('does not flip the state while the accuracy circle straddles the border', async () => {
    const lon = nextArea();
    const device = await newDevice();
    await circle(lon);
    // 30 m inside the border: not inside with an accuracy of 50 m, inside with 10 m.
    const nearBorder = 54 + 0.97 * KM;
    await batch([point(device, 54 + 3 * KM, lon, 0), point(device, nearBorder, lon, 60, 50)]);
    expect(await kinds(device)).toEqual([]);
    await batch([point(device, nearBorder, lon, 120, 10)]);
    expect(await kinds(device)).toEqual([['geofence_enter', 120]]);
    // 30 m outside with 50 m accuracy: still inside; with no accuracy: outside.
    const outside = 54 + 1.03 * KM;
    await batch([point(device, outside, lon, 180, 50)]);
    expect(await kinds(device)).toHaveLength(1);
    await batch([point(device, outside, lon, 240)]);
    expect(await kinds(device)).toEqual([
      ['geofence_enter', 120],
      ['geofence_exit', 240],
    ]);
  });

  it('lets a late point change nothing', async () => {
    const lon = nextArea();
    const device = await newDevice();
    await circle(lon);
    await batch([point(device, 54, lon, 600)]);
    // Older than the point evaluated: neither an exit nor, afterwards, an enter.
    await batch([point(device, 54 + 3 * KM, lon, 300), point(device, 54, lon, 400)]);
    await batch([point(device, 54 + 3 * KM, lon, 900)]);
    expect(await kinds(device)).toEqual([
      ['geofence_enter', 600],
      ['geofence_exit', 900],
    ]);
  });

  it('fires dwell once per stay', async () => {
    const lon = nextArea();
    const device = await newDevice();
    await circle(lon, { dwell_minutes: 10 });
    await batch([point(device, 54, lon, 0), point(device, 54, lon, 300), point(device, 54, lon, 600)]);
    await batch([point(device, 54, lon, 1200), point(device, 54 + 3 * KM, lon, 1300)]);
    await batch([point(device, 54, lon, 1400), point(device, 54, lon, 1999), point(device, 54, lon, 2000)]);
    expect(await kinds(device)).toEqual([
      ['geofence_enter', 0],
      ['geofence_dwell', 600],
      ['geofence_exit', 1300],
      ['geofence_enter', 1400],
      ['geofence_dwell', 2000],
    ]);
  });

  it('fires nothing for an imported year of points, and the next live point still enters', async () => {
    const lon = nextArea();
    const device = await newDevice();
    await circle(lon);
    const lines = ['time,lat,lon'];
    for (let day = 0; day < 365; day++) {
      const time = new Date(Date.UTC(2025, 0, 1) + day * 86_400_000).toISOString();
      lines.push(`${time},${day % 2 === 0 ? 54 : 54 + 3 * KM},${lon}`);
    }
    const response = await api
      .post('/v1/gps/import', lines.join('\n'), {
        query: { device_id: device, format: 'csv' },
        headers: { 'content-type': 'application/octet-stream' },
      })
      .expect(202);
    await onEveryNode(t, (services) => services.gpsFiles.idle());
    const report = (await api.get(`/v1/gps/imports/${response.body.data.id}`).expect(200)).body.data;
    expect(report).toMatchObject({ status: 'done' });
    expect(await kinds(device)).toEqual([]);
    await batch([point(device, 54, lon, 0)]);
    expect(await kinds(device)).toEqual([['geofence_enter', 0]]);
  });

  it('applies a user geofence to the devices its owner sees, not to others', async () => {
    const lon = nextArea();
    const owner = await createUser(t.app);
    const friend = await createUser(t.app);
    const ownerApi = t.as(owner.token);
    const own = (await ownerApi.post('/v1/devices', { name: 'own' }).expect(201)).body.data.id as string;
    const shared = (await t.as(friend.token).post('/v1/devices', { name: 'shared' }).expect(201)).body.data
      .id as string;
    await t.as(friend.token).post(`/v1/devices/${shared}/shares`, { user_id: owner.id, level: 'live' }).expect(201);
    const stranger = await newDevice();
    await ownerApi.post('/v1/geofences', { name: 'Mine', latitude: 54, longitude: lon, radius_km: 1 }).expect(201);
    await batch([point(own, 54, lon, 0), point(shared, 54, lon, 0), point(stranger, 54, lon, 0)]);
    expect(await kinds(own)).toEqual([['geofence_enter', 0]]);
    expect(await kinds(shared)).toEqual([['geofence_enter', 0]]);
    expect(await kinds(stranger)).toEqual([]);
  });

  it("keeps a user's geofence private: its events are not shown to the device's owner or other grantees", async () => {
    const lon = nextArea();
    const owner = await createUser(t.app);
    const friend = await createUser(t.app);
    const ownerApi = t.as(owner.token);
    const friendApi = t.as(friend.token);
    const device = (await ownerApi.post('/v1/devices', { name: 'car' }).expect(201)).body.data.id as string;
    const share = (
      await ownerApi.post(`/v1/devices/${device}/shares`, { user_id: friend.id, level: 'live' }).expect(201)
    ).body.data;
    // The friend's own geofence, which the owner may not read, and an instance-wide one: both apply to the car.
    const secret = (
      await friendApi.post('/v1/geofences', { name: 'Clinic', latitude: 54, longitude: lon, radius_km: 1 }).expect(201)
    ).body.data.id as string;
    await ownerApi.get(`/v1/geofences/${secret}`).expect(404);
    const open = await circle(lon);
    await ownerApi.post('/v1/gps/batch', [point(device, 54, lon, 0)] as never).expect(200);
    const fencesIn = async (reader: Client) =>
      (await reader.get('/v1/events', { query: { device_id: device } }).expect(200)).body.data.map(
        (event: { geofence_id: string | null }) => event.geofence_id,
      );
    expect((await fencesIn(api)).sort()).toEqual([open, secret].sort());
    expect(await fencesIn(ownerApi)).toEqual([open]);
    const hidden = (await api.get('/v1/events', { query: { geofence_id: secret } }).expect(200)).body.data[0]!;
    await ownerApi.get(`/v1/events/${hidden.id}`).expect(404);
    // The friend reads its own geofence's event once the share shows history.
    await ownerApi.patch(`/v1/devices/${device}/shares/${share.id}`, { level: 'history' }).expect(200);
    expect((await fencesIn(friendApi)).sort()).toEqual([open, secret].sort());
    expect((await friendApi.get(`/v1/events/${hidden.id}`).expect(200)).body.data).toEqual(hidden);
  });

  it('stores the points of a batch when a geofence the index still holds is gone', async () => {
    const lon = nextArea();
    const device = await newDevice();
    const fence = await circle(lon);
    await batch([point(device, 54 + 3 * KM, lon, 0)]);
    // Deleted behind the index's back (as between another node's delete and the message that tells this one).
    await t.database.db.deleteFrom('geofences').where('id', '=', fence).execute();
    expect(await batch([point(device, 54, lon, 60)])).toMatchObject({ stored: 1 });
    expect(await kinds(device)).toEqual([]);
  });

  it('stores one event per transition when the same batch reaches two nodes at once', async () => {
    const lon = nextArea();
    const device = await newDevice();
    await circle(lon, { dwell_minutes: 1 });
    const points = [
      point(device, 54 + 3 * KM, lon, 0),
      point(device, 54, lon, 60),
      point(device, 54, lon, 120),
      point(device, 54 + 3 * KM, lon, 180),
    ];
    const nodes = t.nodes.length > 1 ? t.nodes : [t.app, t.app];
    await Promise.all(nodes.map((node) => batch(points, client(node, admin))));
    expect(await kinds(device)).toEqual([
      ['geofence_enter', 60],
      ['geofence_dwell', 120],
      ['geofence_exit', 180],
    ]);
  });

  it('sees a geofence made on the other node at once', async () => {
    const lon = nextArea();
    const device = await newDevice();
    const [first, second] = t.nodes.length > 1 ? t.nodes : [t.app, t.app];
    await batch([point(device, 54, lon, 0)], client(first!, admin));
    await client(second!, admin)
      .post('/v1/geofences', { name: 'Late', latitude: 54, longitude: lon, radius_km: 1 })
      .expect(201);
    await batch([point(device, 54, lon, 60)], client(first!, admin));
    expect(await kinds(device)).toEqual([['geofence_enter', 60]]);
  });

  it("matches an OwnTracks region among the device owner's geofences, never a grantee's of that name", async () => {
    const lon = nextArea();
    const owner = await createUser(t.app);
    const friend = await createUser(t.app);
    const { key, deviceId } = await deviceWithKey(t.app, owner.token, { name: 'phone', scopes: ['gps:write_own'] });
    await t.as(owner.token).post(`/v1/devices/${deviceId}/shares`, { user_id: friend.id, level: 'full' }).expect(201);
    const region = `Gym ${lon}`;
    await t
      .as(friend.token)
      .post('/v1/geofences', { name: region, latitude: 54, longitude: lon, radius_km: 1 })
      .expect(201);
    const message = { _type: 'transition', event: 'enter', desc: region, tst: 1718370000, acc: 12, t: 'c' };
    const answer = await t.as(null).raw({
      method: 'POST',
      url: '/v1/ingest/owntracks',
      headers: {
        authorization: `Basic ${Buffer.from(`ann:${key}`).toString('base64')}`,
        'content-type': 'application/json',
      },
      payload: JSON.stringify(message),
    });
    expect(answer.status).toBe(200);
    expect((await eventsOf(deviceId)).map((event) => [event.type, event.geofence_id])).toEqual([
      ['geofence_enter', null],
    ]);
  });

  it('records OwnTracks transitions as geofence events of the key device', async () => {
    const lon = nextArea();
    const { key, deviceId } = await deviceWithKey(t.app, admin, { name: 'owntracks' });
    const fence = await circle(lon, { name: `Office ${lon}` });
    const owntracks = (body: Record<string, unknown>) =>
      t.as(null).raw({
        method: 'POST',
        url: '/v1/ingest/owntracks',
        headers: {
          authorization: `Basic ${Buffer.from(`jane:${key}`).toString('base64')}`,
          'content-type': 'application/json; charset=utf-8',
          'user-agent': 'Owntracks-Android/gms/420500',
          'x-limit-u': 'jane',
          'x-limit-d': 'pixel7',
        },
        payload: JSON.stringify(body),
      });
    const enter = {
      _type: 'transition',
      wtst: 1718360000,
      lat: 54.0001,
      lon,
      tst: 1718370000,
      acc: 12,
      tid: 'p7',
      event: 'enter',
      desc: `Office ${lon}`,
      t: 'c',
      rid: 'a1b2c3',
      _id: 'e5f6a7b8',
    };
    for (const message of [enter, enter, { ...enter, event: 'leave', desc: 'Gym', tst: 1718373600 }]) {
      const response = await owntracks(message);
      expect([response.status, response.body]).toEqual([200, []]);
    }
    // One without what an event needs is answered as delivered and dropped.
    expect((await owntracks({ _type: 'transition', event: 'enter' })).status).toBe(200);
    const { _type: _dropped, ...kept } = enter;
    const events = await eventsOf(deviceId);
    expect(events).toEqual([
      {
        type: 'geofence_enter',
        geofence_id: fence,
        occurred_at: new Date(1718370000_000),
        source: 'device',
        details: { geofence_name: `Office ${lon}`, accuracy: 12, message: kept },
      },
      {
        type: 'geofence_exit',
        geofence_id: null,
        occurred_at: new Date(1718373600_000),
        source: 'device',
        details: {
          geofence_name: 'Gym',
          accuracy: 12,
          message: { ...kept, event: 'leave', desc: 'Gym', tst: 1718373600 },
        },
      },
    ]);
  });
});

describe('reading events', () => {
  let t: TestApp;
  let admin: string;
  let api: Client;
  beforeAll(async () => {
    t = await buildTestApp();
    admin = await login(t.app, 'admin', TEST_ADMIN.password);
    api = t.as(admin);
  });
  afterAll(() => t.close());

  const point = (deviceId: string, latitude: number, offsetSecs: number) => ({
    device_id: deviceId,
    latitude,
    longitude: 30,
    timestamp: at(offsetSecs),
    ...SPEEDS,
  });

  it('lists the events of the devices one may see, filtered and paged by cursor', async () => {
    const owner = await createUser(t.app);
    const grantee = await createUser(t.app);
    const stranger = await createUser(t.app);
    const ownerApi = t.as(owner.token);
    const device = (await ownerApi.post('/v1/devices', { name: 'boat' }).expect(201)).body.data.id as string;
    const fence = (
      await api.post('/v1/geofences', { name: 'Harbour', latitude: 54, longitude: 30, radius_km: 1 }).expect(201)
    ).body.data.id as string;
    // In, out, in, out: four events.
    await ownerApi
      .post('/v1/gps/batch', [
        point(device, 54, 0),
        point(device, 54 + 3 * KM, 60),
        point(device, 54, 120),
        point(device, 54 + 3 * KM, 180),
      ])
      .expect(200);
    const all = (await ownerApi.get('/v1/events', { query: { device_id: device } }).expect(200)).body;
    expect(all.data.map((event: { type: string }) => event.type)).toEqual([
      'geofence_exit',
      'geofence_enter',
      'geofence_exit',
      'geofence_enter',
    ]);
    expect(all.data[3]).toEqual({
      id: expect.any(String),
      type: 'geofence_enter',
      device_id: device,
      geofence_id: fence,
      occurred_at: new Date(at(0) * 1000).toISOString(),
      source: 'server',
      latitude: 54,
      longitude: 30,
      details: { geofence_name: 'Harbour', point_id: expect.any(String), accuracy: null },
      created_at: expect.any(String),
    });
    expect(all.pagination).toEqual({ page: 1, limit: 50, total: 4, total_pages: 1 });
    // Filters, and a cursor page.
    const enters = await ownerApi
      .get('/v1/events', { query: { device_id: device, type: 'geofence_enter' } })
      .expect(200);
    expect(enters.body.data.map((event: { occurred_at: string }) => event.occurred_at)).toEqual([
      new Date(at(120) * 1000).toISOString(),
      new Date(at(0) * 1000).toISOString(),
    ]);
    const from = new Date(at(60) * 1000).toISOString();
    const to = new Date(at(120) * 1000).toISOString();
    const ranged = await ownerApi.get('/v1/events', { query: { geofence_id: fence, from, to } }).expect(200);
    expect(ranged.body.data).toEqual([all.data[1], all.data[2]]);
    const first = (await ownerApi.get('/v1/events', { query: { device_id: device, limit: 3 } }).expect(200)).body;
    const next = new URL(first._links.next!).searchParams.get('after')!;
    const second = await ownerApi
      .get('/v1/events', { query: { device_id: device, limit: 3, after: next } })
      .expect(200);
    expect([...first.data, ...second.body.data]).toEqual(all.data);
    expect((await ownerApi.get(`/v1/events/${all.data[0]!.id}`).expect(200)).body.data).toEqual(all.data[0]);

    // A stranger sees none of it; a grantee sees it once the device is shared; the admin (events:read) sees it.
    const strangerApi = t.as(stranger.token);
    expect((await strangerApi.get('/v1/events').expect(200)).body.data).toEqual([]);
    expect((await strangerApi.get(`/v1/events/${all.data[0]!.id}`).expect(404)).body).toEqual({
      error: 'NotFound',
      message: 'Event not found',
      code: 'event.not_found',
    });
    const granteeApi = t.as(grantee.token);
    const seen = async () =>
      (await granteeApi.get('/v1/events', { query: { device_id: device } }).expect(200)).body.data;
    expect(await seen()).toEqual([]);
    // As far back as the device's points: a live share reads no stored event (new ones come on the WebSocket), a
    // history share of 7 days none of these (they are months old), one of 400 days all of them.
    const share = (
      await ownerApi.post(`/v1/devices/${device}/shares`, { user_id: grantee.id, level: 'live' }).expect(201)
    ).body.data;
    expect(await seen()).toEqual([]);
    await granteeApi.get(`/v1/events/${all.data[0]!.id}`).expect(404);
    const shareUrl = `/v1/devices/${device}/shares/${share.id}` as const;
    await ownerApi.patch(shareUrl, { level: 'history', history_days: 7 }).expect(200);
    expect(await seen()).toEqual([]);
    await ownerApi.patch(shareUrl, { history_days: 400 }).expect(200);
    expect(await seen()).toEqual(all.data);
    expect((await granteeApi.get(`/v1/events/${all.data[0]!.id}`).expect(200)).body.data).toEqual(all.data[0]);
    expect((await api.get('/v1/events', { query: { device_id: device } }).expect(200)).body.data).toEqual(all.data);
  });

  it('streams events on the WebSocket channel events to those who may see the device', async () => {
    const owner = await createUser(t.app);
    const stranger = await createUser(t.app);
    const ownerApi = t.as(owner.token);
    const device = (await ownerApi.post('/v1/devices', { name: 'kayak' }).expect(201)).body.data.id as string;
    await ownerApi.post('/v1/geofences', { name: 'Jetty', latitude: 55, longitude: 30, radius_km: 1 }).expect(201);
    const base = await t.app.listen({ host: '127.0.0.1', port: 0 });
    const sockets = await Promise.all([socketAs(base, owner.token), socketAs(base, stranger.token)]);
    try {
      const [mine, theirs] = sockets;
      for (const socket of sockets)
        await socket.request({ type: 'Subscribe', channel: 'events', id: 'e' }, 'Subscribed');
      await ownerApi.post('/v1/gps/batch', [point(device, 55, 0)]).expect(200);
      const listed = (await ownerApi.get('/v1/events', { query: { device_id: device } }).expect(200)).body.data;
      expect(await mine!.next('Event')).toEqual({ type: 'Event', channel: 'events', data: listed[0] });
      await theirs!.request({ type: 'Ping' }, 'Pong');
      expect(theirs!.pending()).toEqual([]);
    } finally {
      for (const socket of sockets) socket.close();
    }
  });

  it('answers the GraphQL query events as the REST list, under the same visibility', async () => {
    const owner = await createUser(t.app);
    const stranger = await createUser(t.app);
    const ownerApi = t.as(owner.token);
    const device = (await ownerApi.post('/v1/devices', { name: 'canoe' }).expect(201)).body.data.id as string;
    await ownerApi.post('/v1/geofences', { name: 'Weir', latitude: 57, longitude: 30, radius_km: 1 }).expect(201);
    await ownerApi.post('/v1/gps/batch', [point(device, 57, 0), point(device, 57 + 3 * KM, 60)]).expect(200);
    const [latest] = (await ownerApi.get('/v1/events', { query: { device_id: device } }).expect(200)).body.data;
    const query =
      'query ($device: ID, $type: String) { events(deviceId: $device, type: $type, limit: 1) { data { id type deviceId ' +
      'geofenceId occurredAt source latitude longitude details createdAt } pagination { total } totalEstimated next } }';
    const ask = async (token: string, variables: Record<string, unknown>) =>
      (await t.as(token).raw({ method: 'POST', url: '/v1/gql', payload: { query, variables } })).body as {
        data?: { events: Record<string, unknown> };
        errors?: { message: string }[];
      };
    const answer = await ask(owner.token, { device });
    expect(answer.data!.events).toEqual({
      data: [
        {
          id: latest!.id,
          type: 'geofence_exit',
          deviceId: device,
          geofenceId: latest!.geofence_id,
          occurredAt: latest!.occurred_at,
          source: 'server',
          latitude: latest!.latitude,
          longitude: 30,
          details: latest!.details,
          createdAt: latest!.created_at,
        },
      ],
      pagination: { total: 2 },
      totalEstimated: false,
      next: expect.any(String),
    });
    expect((await ask(stranger.token, { device })).data!.events).toMatchObject({ data: [], pagination: { total: 0 } });
    expect((await ask(owner.token, { device, type: 'nonsense' })).errors![0]!.message).toBe(
      "Argument 'type' must be one of: geofence_enter, geofence_exit, geofence_dwell, device_offline, device_online, overspeed, low_battery, sos",
    );
  });

  it('refuses bad filters with 400 naming the field', async () => {
    const bad = await api.get('/v1/events', { query: { type: 'nonsense' as never } }).expect(400);
    expect(bad.body.message).toBe(
      "Query parameter 'type' must be one of: geofence_enter, geofence_exit, geofence_dwell, device_offline, device_online, overspeed, low_battery, sos",
    );
    const cursor = await api.get('/v1/events', { query: { after: 'abc' } }).expect(400);
    expect(cursor.body.message).toBe("Query parameter 'after' is not a valid cursor; take it from a page's next link");
    expect((await t.as(null).get('/v1/events')).status).toBe(401);
  });
});

describe('events retention', () => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    t = await buildTestApp();
    admin = await login(t.app, 'admin', TEST_ADMIN.password);
  });
  afterAll(() => t.close());

  it('keeps events for ever by default, and removes those older than events.retention_days', async () => {
    const api = t.as(admin);
    const runJob = async () =>
      (await api.post('/v1/system/jobs/events-retention/run').expect(200)).body.data.last_result as Record<
        string,
        unknown
      >;
    const device = (await api.post('/v1/devices', { name: 'old and new' }).expect(201)).body.data.id as string;
    await api.post('/v1/geofences', { name: 'Dock', latitude: 56, longitude: 30, radius_km: 1 }).expect(201);
    const now = Math.floor(t.clock.nowMs() / 1000);
    const old = now - 40 * 86_400;
    const fix = (timestamp: number, latitude: number) => ({
      device_id: device,
      latitude,
      longitude: 30,
      timestamp,
      ...SPEEDS,
    });
    await api.post('/v1/gps/batch', [fix(old, 56), fix(old + 60, 56 + 3 * KM), fix(now - 60, 56)]).expect(200);
    const listed = async () =>
      (await api.get('/v1/events', { query: { device_id: device } }).expect(200)).body.data.map(
        (event: { type: string }) => event.type,
      );
    expect(await listed()).toEqual(['geofence_enter', 'geofence_exit', 'geofence_enter']);
    expect(await runJob()).toEqual({ retention_days: null, events_deleted: 0 });
    await api.patch('/v1/system-config/events.retention_days', { value: 30 }).expect(200);
    expect(await runJob()).toMatchObject({ retention_days: 30, events_deleted: 2 });
    expect(await listed()).toEqual(['geofence_enter']);
  });
});
