import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '../../../test/client.js';
import { buildTestApp, createUser, login, TEST_ADMIN, testConfig, type TestApp } from '../../../test/helpers.js';
import { openSocket, type TestSocket } from '../../../test/ws-client.js';

const DAY = 86_400_000;
const SPEEDS = { speed_kmh: 1, speed_mps: 0.28, speed_mph: 0.62, speed_knots: 0.54 };

type Caller = 'owner' | 'live' | 'history7' | 'full' | 'expired' | 'member' | 'stranger' | 'admin';

/** What each caller may read of the owner's shared device D (points p0, p3, p8 days old, all in trip T). */
const RIGHTS: Record<
  Caller,
  { device: boolean; points: ('p0' | 'p3' | 'p8')[]; trip: boolean; export: 200 | 403 | 404 }
> = {
  owner: { device: true, points: ['p0', 'p3', 'p8'], trip: true, export: 200 },
  live: { device: true, points: [], trip: false, export: 403 },
  history7: { device: true, points: ['p0', 'p3'], trip: false, export: 403 },
  full: { device: true, points: ['p0', 'p3', 'p8'], trip: true, export: 200 },
  expired: { device: false, points: [], trip: false, export: 404 },
  member: { device: true, points: ['p0', 'p3', 'p8'], trip: false, export: 403 },
  stranger: { device: false, points: [], trip: false, export: 404 },
  admin: { device: true, points: ['p0', 'p3', 'p8'], trip: true, export: 200 },
};
const CALLERS = Object.keys(RIGHTS) as Caller[];

/**
 * The visibility rule across every tracking route, GraphQL field and the live channel (issue 43): the owner; a
 * live, a 7-day history and a full grantee; a grantee whose share expired; a member of a group the device is
 * shared with (history, all days); a stranger; and a holder of the global permissions. Nothing outside each
 * caller's right is answered. (The revocation through two nodes is live.test.ts on the two-nodes project.)
 */
describe('the visibility rule, route by route', () => {
  let t: TestApp;
  let base: string;
  const api = {} as Record<Caller, Client>;
  const tokens = {} as Record<Caller, string>;
  const ids = {} as Record<'D' | 'D2' | 'T' | 'G' | 'p0' | 'p3' | 'p8' | 'q', string>;
  const sockets: TestSocket[] = [];

  beforeAll(async () => {
    t = await buildTestApp({ config: { rateLimit: { ...testConfig().rateLimit, gpsWrite: 10_000, user: 10_000 } } });
    base = await t.app.listen({ host: '127.0.0.1', port: 0 });
    tokens.admin = await login(t.app, 'admin', TEST_ADMIN.password);
    api.admin = t.as(tokens.admin);
    const users = {} as Record<Caller, { id: string; username: string }>;
    for (const caller of CALLERS.filter((c) => c !== 'admin')) {
      const user = (await createUser(t.app)) as { id: string; username: string; token: string };
      users[caller] = user;
      tokens[caller] = user.token;
      api[caller] = t.as(user.token);
    }
    const owner = api.owner;
    ids.D = (await owner.post('/v1/devices', { name: 'Shared' }).expect(201)).body.data.id;
    ids.D2 = (await owner.post('/v1/devices', { name: 'Private' }).expect(201)).body.data.id;
    ids.T = (
      await owner.post('/v1/trips', { name: 'Sail', device_id: ids.D, gps_logging_enabled: true }).expect(201)
    ).body.data.id;
    await owner.patch(`/v1/trips/${ids.T}`, { status: 'active' }).expect(200);
    const at = (daysAgo: number) => Math.floor((t.clock.nowMs() - daysAgo * DAY - 60_000) / 1000);
    const point = async (deviceId: string, daysAgo: number) =>
      (
        await owner
          .post('/v1/gps', { device_id: deviceId, latitude: 54, longitude: 10, timestamp: at(daysAgo), ...SPEEDS })
          .expect(201)
      ).body.data.id;
    ids.p8 = await point(ids.D, 8);
    ids.p3 = await point(ids.D, 3);
    ids.p0 = await point(ids.D, 0);
    ids.q = await point(ids.D2, 4);
    await owner.patch(`/v1/trips/${ids.T}`, { status: 'completed' }).expect(200);
    ids.G = (
      await owner.post('/v1/geofences', { name: 'Harbour', latitude: 54, longitude: 10, radius_km: 1 }).expect(201)
    ).body.data.id;

    const share = (grantee: Caller, level: 'live' | 'history' | 'full', extra: object = {}) =>
      owner.post(`/v1/devices/${ids.D}/shares`, { user_id: users[grantee].id, level, ...extra }).expect(201);
    await share('live', 'live');
    await share('history7', 'history', { history_days: 7 });
    await share('full', 'full');
    await share('expired', 'full', { expires_at: new Date(t.clock.nowMs() + 60_000).toISOString() });
    const group = (await owner.post('/v1/groups', { name: 'Crew' }).expect(201)).body.data;
    const invitation = (
      await owner.post(`/v1/groups/${group.id}/invitations`, { username: users.member.username }).expect(201)
    ).body.data;
    await api.member.post(`/v1/invitations/${invitation.id}/accept`).expect(200);
    await owner.post(`/v1/devices/${ids.D}/shares`, { group_id: group.id, level: 'history' }).expect(201);
    t.clock.advance(120_000);
  });
  afterAll(async () => {
    for (const socket of sockets) socket.close();
    await t.close();
  });

  /** The ids of the owner's records among `found` (an admin sees other records too: those are not judged). */
  const ours = (found: string[]) => found.filter((id) => Object.values(ids).includes(id)).sort();
  const named = (...names: (keyof typeof ids)[]) => names.map((name) => ids[name]).sort();
  const devicesOf = (caller: Caller) =>
    caller === 'owner'
      ? named('D', 'D2')
      : caller === 'admin'
        ? named('D', 'D2')
        : RIGHTS[caller].device
          ? named('D')
          : [];
  /** The points of a GeoJSON export (a feature per point). */
  const featuresIn = (text: string) => (JSON.parse(text) as { features: unknown[] }).features;
  const pointsOf = (caller: Caller) =>
    named(...RIGHTS[caller].points, ...(caller === 'owner' || caller === 'admin' ? (['q'] as const) : []));

  it.each(CALLERS)('devices: %s', async (caller) => {
    const list = (await api[caller].get('/v1/devices', { query: { limit: 100 } }).expect(200)).body.data;
    expect(ours(list.map((device) => device.id))).toEqual(devicesOf(caller));
    expect((await api[caller].get(`/v1/devices/${ids.D}`)).status).toBe(RIGHTS[caller].device ? 200 : 404);
    expect((await api[caller].get(`/v1/devices/${ids.D2}`)).status).toBe(
      caller === 'owner' || caller === 'admin' ? 200 : 404,
    );
  });

  it.each(CALLERS)('points, one by one and listed: %s', async (caller) => {
    const list = (await api[caller].get('/v1/gps', { query: { limit: 100 } }).expect(200)).body.data;
    expect(ours(list.map((point) => point.id))).toEqual(pointsOf(caller));
    for (const name of ['p0', 'p3', 'p8', 'q'] as const) {
      const readable = pointsOf(caller).includes(ids[name]);
      expect([name, (await api[caller].get(`/v1/gps/${ids[name]}`)).status]).toEqual([name, readable ? 200 : 404]);
    }
  });

  it.each(CALLERS)('the latest point: %s', async (caller) => {
    const current = await api[caller].get('/v1/gps/current', { query: { device_id: ids.D } });
    expect(current.status).toBe(RIGHTS[caller].device ? 200 : 404);
    if (current.status === 200) expect(current.body.data.id).toBe(ids.p0);
    const perDevice = (await api[caller].get('/v1/gps/current/devices').expect(200)).body;
    const expected = RIGHTS[caller].device ? named('p0') : [];
    if (caller === 'owner' || caller === 'admin') expected.push(ids.q);
    expect(ours(perDevice.map((point) => point.id))).toEqual(expected.sort());
  });

  it.each(CALLERS)('the track and the file export: %s', async (caller) => {
    const track = await api[caller].get('/v1/gps/track', { query: { device_id: ids.D } });
    expect(track.status).toBe(RIGHTS[caller].device ? 200 : 404);
    if (track.status === 200) expect(track.body.total).toBe(RIGHTS[caller].points.length);
    const exported = await api[caller].get('/v1/gps/export', { query: { device_id: ids.D, format: 'geojson' } });
    expect(exported.status).toBe(RIGHTS[caller].export);
    if (exported.status === 200) expect(featuresIn(exported.text)).toHaveLength(RIGHTS[caller].points.length);
  });

  it.each(CALLERS)('trips and their points: %s', async (caller) => {
    const list = (await api[caller].get('/v1/trips', { query: { limit: 100 } }).expect(200)).body.data;
    expect(ours(list.map((trip) => trip.id))).toEqual(RIGHTS[caller].trip ? [ids.T] : []);
    const expected = RIGHTS[caller].trip ? 200 : 404;
    expect((await api[caller].get(`/v1/trips/${ids.T}`)).status).toBe(expected);
    expect((await api[caller].get(`/v1/trips/${ids.T}/history`)).status).toBe(expected);
    const points = await api[caller].get(`/v1/trips/${ids.T}/gps`, { query: { limit: 100 } });
    expect(points.status).toBe(expected);
    if (points.status === 200) {
      expect(ours(points.body.data.map((point) => point.id))).toEqual(named(...RIGHTS[caller].points));
      expect(points.body.pagination.total).toBe(RIGHTS[caller].points.length);
    }
    const exported = await api[caller].get(`/v1/trips/${ids.T}/export`, { query: { format: 'geojson' } });
    expect(exported.status).toBe(expected);
    if (exported.status === 200) expect(featuresIn(exported.text)).toHaveLength(RIGHTS[caller].points.length);
  });

  it.each(CALLERS)('geofences: %s', async (caller) => {
    const list = (await api[caller].get('/v1/geofences', { query: { limit: 100 } }).expect(200)).body.data;
    expect(ours(list.map((geofence) => geofence.id))).toEqual(RIGHTS[caller].trip ? [ids.G] : []);
    expect((await api[caller].get(`/v1/geofences/${ids.G}`)).status).toBe(RIGHTS[caller].trip ? 200 : 404);
  });

  it.each(CALLERS)('GraphQL: %s', async (caller) => {
    const query = `{
      devices(limit: 10) { data { id latestPosition { id } } }
      gpsPoints(limit: 20) { data { id } }
      trips(limit: 5) { data { id points(limit: 10) { id } } }
      latestPositions { id }
    }`;
    const answer = (await api[caller].post('/v1/gql', { query }).expect(200)).body as {
      data: {
        devices: { data: { id: string; latestPosition: { id: string } | null }[] };
        gpsPoints: { data: { id: string }[] };
        trips: { data: { id: string; points: { id: string }[] }[] };
        latestPositions: { id: string }[];
      };
      errors?: unknown;
    };
    expect(answer.errors).toBeUndefined();
    const { devices, gpsPoints, trips, latestPositions } = answer.data;
    expect(ours(devices.data.map((device) => device.id))).toEqual(devicesOf(caller));
    expect(ours(devices.data.flatMap((device) => device.latestPosition?.id ?? []))).toEqual(
      ours(latestPositions.map((point) => point.id)),
    );
    expect(ours(gpsPoints.data.map((point) => point.id))).toEqual(pointsOf(caller));
    expect(ours(trips.data.map((trip) => trip.id))).toEqual(RIGHTS[caller].trip ? [ids.T] : []);
    for (const trip of trips.data.filter((found) => found.id === ids.T))
      expect(ours(trip.points.map((point) => point.id))).toEqual(named(...RIGHTS[caller].points));
  });

  it('changes: only the maker changes a trip or geofence; a trip logs only to a device its maker owns', async () => {
    const codeOf = async (pending: PromiseLike<{ status: number; body: unknown }>) => {
      const { status, body } = await pending;
      return [status, (body as { code?: string }).code];
    };
    expect(await codeOf(api.full.patch(`/v1/trips/${ids.T}`, { name: 'Mine' }))).toEqual([403, 'trip.not_owner']);
    expect(await codeOf(api.full.delete(`/v1/trips/${ids.T}`))).toEqual([403, 'trip.not_owner']);
    expect(await codeOf(api.stranger.patch(`/v1/trips/${ids.T}`, { name: 'Mine' }))).toEqual([404, 'trip.not_found']);
    expect(await codeOf(api.full.patch(`/v1/geofences/${ids.G}`, { name: 'Mine' }))).toEqual([
      403,
      'geofence.not_owner',
    ]);
    expect(await codeOf(api.stranger.delete(`/v1/geofences/${ids.G}`))).toEqual([404, 'geofence.not_found']);
    expect(await codeOf(api.full.post('/v1/trips', { name: 'Borrowed', device_id: ids.D }))).toEqual([
      403,
      'device.not_owner',
    ]);
    expect(await codeOf(api.full.post('/v1/trips', { name: 'Unseen', device_id: ids.D2 }))).toEqual([
      400,
      'database.missing_reference',
    ]);
    expect(await codeOf(api.owner.patch(`/v1/trips/${ids.T}`, { device_id: ids.D2 }))).toEqual([200, undefined]);
    expect(await codeOf(api.owner.patch(`/v1/trips/${ids.T}`, { device_id: ids.D }))).toEqual([200, undefined]);

    // A grantee's own trip and geofence are theirs: the device's owner does not see them, an admin does.
    const trip = (await api.full.post('/v1/trips', { name: 'Walk' }).expect(201)).body.data;
    const fence = (
      await api.full.post('/v1/geofences', { name: 'Home', latitude: 1, longitude: 1, radius_km: 1 }).expect(201)
    ).body.data;
    expect((await api.owner.get(`/v1/trips/${trip.id}`)).status).toBe(404);
    expect((await api.owner.get(`/v1/geofences/${fence.id}`)).status).toBe(404);
    expect((await api.admin.get(`/v1/trips/${trip.id}`)).status).toBe(200);
    await api.full.patch(`/v1/geofences/${fence.id}`, { name: 'Home sweet home' }).expect(200);
    await api.full.delete(`/v1/trips/${trip.id}`).expect(204);
    await api.admin.patch(`/v1/geofences/${ids.G}`, { is_active: true }).expect(200);
  });

  it('the live gps channel: a new point reaches those who see the device, no one else', async () => {
    const listening = new Map<Caller, TestSocket>();
    for (const caller of CALLERS) {
      const { ticket } = (await api[caller].post('/v1/ws/ticket').expect(200)).body;
      const socket = await openSocket(base, { protocols: ['service-ticket', ticket] });
      sockets.push(socket);
      await socket.next('Welcome');
      await socket.request({ type: 'Subscribe', channel: 'gps', id: 'gps' }, 'Subscribed');
      listening.set(caller, socket);
    }
    // The point is removed afterwards: the other tests read the device's latest point and track as set up.
    const sent = (
      await api.owner
        .post('/v1/gps', {
          device_id: ids.D,
          latitude: 54.1,
          longitude: 10.1,
          timestamp: Math.floor(t.clock.nowMs() / 1000),
          ...SPEEDS,
        })
        .expect(201)
    ).body.data.id;
    const heard = async (socket: TestSocket) => {
      const message = await socket.next('GpsPoint', 1_000).catch(() => undefined);
      return (message?.data as { id?: string } | undefined)?.id === sent;
    };
    const reached = await Promise.all(CALLERS.map(async (caller) => [caller, await heard(listening.get(caller)!)]));
    await api.owner.delete(`/v1/gps/${sent}`).expect(204);
    expect(Object.fromEntries(reached)).toEqual(
      Object.fromEntries(CALLERS.map((caller) => [caller, RIGHTS[caller].device])),
    );
  });
});
