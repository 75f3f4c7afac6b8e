import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '../../../test/client.js';
import {
  adminIdOf,
  buildTestApp,
  createUser,
  login,
  TEST_ADMIN,
  testConfig,
  type TestApp,
} from '../../../test/helpers.js';

const DAY = 86_400_000;
const SPEEDS = { speed_kmh: 1, speed_mps: 0.28, speed_mph: 0.62, speed_knots: 0.54 };

/**
 * Self-service tracking and sharing (issue 43): a user without the global permissions reaches their own devices
 * and those shared with them, each at its level; holders of the global permissions see every device as before.
 */
describe('self-service tracking and sharing', () => {
  let t: TestApp;
  let admin: Client;
  beforeAll(async () => {
    t = await buildTestApp({ config: { rateLimit: { ...testConfig().rateLimit, gpsWrite: 10_000, user: 10_000 } } });
    admin = t.as(await login(t.app, 'admin', TEST_ADMIN.password));
  });
  afterAll(() => t.close());

  /** A registered user (role User only) with a client. */
  const person = async () => {
    const user = (await createUser(t.app)) as { id: string; username: string; token: string };
    return { id: user.id, username: user.username, api: t.as(user.token) };
  };
  const deviceOf = async (api: Client, name = 'Phone') =>
    (await api.post('/v1/devices', { name }).expect(201)).body.data;
  /** A point of the device `daysAgo` days before now (by the app's clock). */
  const pointAt = async (api: Client, deviceId: string, daysAgo: number, latitude = 54.3) =>
    (
      await api
        .post('/v1/gps', {
          device_id: deviceId,
          latitude,
          longitude: 10.1,
          ...SPEEDS,
          timestamp: Math.floor((t.clock.nowMs() - daysAgo * DAY) / 1000),
        })
        .expect(201)
    ).body.data;
  const listedIds = async (api: Client) =>
    (await api.get('/v1/gps', { query: { limit: 100 } }).expect(200)).body.data.map((point) => point.id).sort();
  const deviceIds = async (api: Client) =>
    (await api.get('/v1/devices', { query: { limit: 100 } }).expect(200)).body.data.map((device) => device.id).sort();

  it('lets a registered user make a device of their own, which is theirs alone to see', async () => {
    const anna = await person();
    const stranger = await person();
    const device = await deviceOf(anna.api);
    expect(device).toMatchObject({ name: 'Phone', owner_id: anna.id });
    const point = await pointAt(anna.api, device.id, 0);

    expect(await deviceIds(anna.api)).toEqual([device.id]);
    expect(await listedIds(anna.api)).toEqual([point.id]);
    expect((await anna.api.get('/v1/gps/current').expect(200)).body.data.id).toBe(point.id);
    expect((await anna.api.get('/v1/gps/current/devices').expect(200)).body.map((p) => p.id)).toEqual([point.id]);

    // A stranger sees nothing of it, and learns nothing of its existence.
    expect(await deviceIds(stranger.api)).toEqual([]);
    expect(await listedIds(stranger.api)).toEqual([]);
    expect((await stranger.api.get(`/v1/devices/${device.id}`)).status).toBe(404);
    expect((await stranger.api.get(`/v1/gps/${point.id}`)).status).toBe(404);
    expect((await stranger.api.get('/v1/gps/current', { query: { device_id: device.id } })).status).toBe(404);
    expect((await stranger.api.get('/v1/gps/current/devices').expect(200)).body).toEqual([]);
    expect((await stranger.api.patch(`/v1/devices/${device.id}`, { name: 'Mine' })).status).toBe(404);
    expect((await stranger.api.delete(`/v1/devices/${device.id}`)).status).toBe(404);
    expect(
      (
        await stranger.api.post('/v1/gps', {
          device_id: device.id,
          latitude: 1,
          longitude: 1,
          timestamp: 1_700_000_000,
          ...SPEEDS,
        })
      ).body,
    ).toEqual({
      error: 'BadRequest',
      message: 'device_id does not name an existing device',
      code: 'gps.unknown_device',
    });

    // The holder of the global permissions sees every device, as the interface spec says.
    const all = (await admin.get('/v1/devices', { query: { limit: 100 } }).expect(200)).body.data;
    expect(all.map((d) => d.id)).toContain(device.id);
    expect((await admin.get(`/v1/gps/${point.id}`).expect(200)).body.data.id).toBe(point.id);
  });

  it('sends a user’s points only to a device they own, naming one', async () => {
    const anna = await person();
    expect(
      (await anna.api.post('/v1/gps', { latitude: 54, longitude: 10, timestamp: 1_700_000_000, ...SPEEDS }).expect(400))
        .body,
    ).toEqual({
      error: 'BadRequest',
      message: 'device_id is required: your points land on one of your devices (or link your API key to one)',
      code: 'gps.device_required',
    });
  });

  it('shares a device at three levels: live, history of N days, full', async () => {
    const owner = await person();
    const live = await person();
    const history = await person();
    const device = await deviceOf(owner.api);
    const old = await pointAt(owner.api, device.id, 8, 54.1);
    const recent = await pointAt(owner.api, device.id, 1, 54.2);
    const now = await pointAt(owner.api, device.id, 0, 54.3);

    await owner.api.post(`/v1/devices/${device.id}/shares`, { user_id: live.id, level: 'live' }).expect(201);
    // By username, as a person types it: the answer names both sides.
    const shared = await owner.api
      .post(`/v1/devices/${device.id}/shares`, {
        username: history.username.toUpperCase(),
        level: 'history',
        history_days: 7,
      })
      .expect(201);
    expect(shared.body.data).toEqual({
      id: expect.any(String),
      owner_id: owner.id,
      owner_username: owner.username,
      device_id: device.id,
      user_id: history.id,
      group_id: null,
      grantee_name: history.username,
      level: 'history',
      history_days: 7,
      expires_at: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });

    // live: the device and its current position, no points.
    expect(await deviceIds(live.api)).toEqual([device.id]);
    expect((await live.api.get('/v1/gps/current').expect(200)).body.data.id).toBe(now.id);
    expect(await listedIds(live.api)).toEqual([]);
    expect((await live.api.get(`/v1/gps/${recent.id}`)).status).toBe(404);

    // history, 7 days: the point of 8 days ago stays hidden.
    expect(await listedIds(history.api)).toEqual([recent.id, now.id].sort());
    expect((await history.api.get(`/v1/gps/${old.id}`)).status).toBe(404);
    expect((await history.api.get(`/v1/gps/${recent.id}`).expect(200)).body.data.id).toBe(recent.id);

    // A grantee writes nothing to a device they do not own.
    expect(
      (
        await history.api
          .post('/v1/gps', { device_id: device.id, latitude: 1, longitude: 1, timestamp: 1_700_000_000, ...SPEEDS })
          .expect(403)
      ).body.code,
    ).toBe('gps.device_not_writable');
    expect((await history.api.patch(`/v1/devices/${device.id}`, { name: 'x' }).expect(403)).body.code).toBe(
      'device.not_owner',
    );

    // Both sides are listed.
    const incoming = (await history.api.get('/v1/shares', { query: { direction: 'incoming' } }).expect(200)).body;
    expect(incoming.data.map((s) => [s.id, s.owner_username])).toEqual([[shared.body.data.id, owner.username]]);
    const outgoing = (await owner.api.get('/v1/shares').expect(200)).body.data;
    expect(outgoing.map((s) => s.user_id).sort()).toEqual([live.id, history.id].sort());

    // Widened to full history.
    await owner.api
      .patch(`/v1/devices/${device.id}/shares/${shared.body.data.id}`, { level: 'full', history_days: null })
      .expect(200);
    expect(await listedIds(history.api)).toEqual([old.id, recent.id, now.id].sort());
  });

  it('ends a share at its expiry and at once when it is revoked', async () => {
    const owner = await person();
    const friend = await person();
    const device = await deviceOf(owner.api);
    await pointAt(owner.api, device.id, 0);
    const expiresAt = new Date(t.clock.nowMs() + 2 * 3_600_000).toISOString();
    const share = (
      await owner.api
        .post(`/v1/devices/${device.id}/shares`, { user_id: friend.id, level: 'history', expires_at: expiresAt })
        .expect(201)
    ).body.data;
    expect(await deviceIds(friend.api)).toEqual([device.id]);

    t.clock.advance(2 * 3_600_000 + 1_000);
    expect(await deviceIds(friend.api)).toEqual([]);
    expect((await friend.api.get('/v1/gps/current').expect(404)).body.code).toBe('gps.no_point');

    await owner.api.patch(`/v1/shares/${share.id}`, { expires_at: null }).expect(200);
    expect(await deviceIds(friend.api)).toEqual([device.id]);
    await owner.api.delete(`/v1/devices/${device.id}/shares/${share.id}`).expect(204);
    expect(await deviceIds(friend.api)).toEqual([]);
  });

  it("answers the map's device pages with the devices the caller may see, theirs and shared ones, and no other", async () => {
    const owner = await person();
    const friend = await person();
    const stranger = await person();
    const [boat, car] = [await deviceOf(owner.api, 'Boat'), await deviceOf(owner.api, 'Car')];
    const own = await deviceOf(friend.api, 'Bike');
    await deviceOf(stranger.api, 'Van');
    await owner.api.post(`/v1/devices/${boat.id}/shares`, { user_id: friend.id, level: 'live' }).expect(201);
    const [first, second] = [boat, own].sort((a, b) => a.id.localeCompare(b.id)) as [typeof own, typeof own];

    const page = (await friend.api.get('/v1/map/devices', { query: { limit: 1 } }).expect(200)).body;
    expect(page).toEqual({ data: [first], next: first.id });
    const last = (await friend.api.get('/v1/map/devices', { query: { limit: 1, after: first.id } }).expect(200)).body;
    expect(last).toEqual({ data: [second], next: null });
    // Both sides of a share see the same representation as GET /v1/devices/{id} gives.
    expect((await owner.api.get('/v1/map/devices').expect(200)).body).toEqual({
      data: [boat, car].sort((a, b) => a.id.localeCompare(b.id)),
      next: null,
    });
  });

  it('shares every device of the owner, those made later too', async () => {
    const owner = await person();
    const friend = await person();
    const first = await deviceOf(owner.api, 'Boat');
    await owner.api.post('/v1/shares', { user_id: friend.id, level: 'live' }).expect(201);
    const second = await deviceOf(owner.api, 'Car');
    expect(await deviceIds(friend.api)).toEqual([first.id, second.id].sort());
  });

  it('shares with a group: its members see the device, and one who leaves does not', async () => {
    const owner = await person();
    const member = (await createUser(t.app)) as { id: string; username: string; token: string };
    const memberApi = t.as(member.token);
    const device = await deviceOf(owner.api);
    const group = (await owner.api.post('/v1/groups', { name: 'Family' }).expect(201)).body.data;
    const invitation = (
      await owner.api.post(`/v1/groups/${group.id}/invitations`, { username: member.username }).expect(201)
    ).body.data;
    await memberApi.post(`/v1/invitations/${invitation.id}/accept`).expect(200);
    const share = (
      await owner.api.post(`/v1/devices/${device.id}/shares`, { group_id: group.id, level: 'live' }).expect(201)
    ).body.data;
    expect(share.grantee_name).toBe('Family');
    expect(await deviceIds(memberApi)).toEqual([device.id]);

    await memberApi.delete(`/v1/groups/${group.id}/members/${member.id}`).expect(204);
    expect(await deviceIds(memberApi)).toEqual([]);
  });

  it('refuses sharing with oneself, in the past, and by someone who does not own the device', async () => {
    const owner = await person();
    const friend = await person();
    const device = await deviceOf(owner.api);
    const share = (level: 'live') => ({ user_id: owner.id, level });
    expect((await owner.api.post(`/v1/devices/${device.id}/shares`, share('live')).expect(400)).body.code).toBe(
      'sharing.self_share',
    );
    expect(
      (await owner.api.post(`/v1/devices/${device.id}/shares`, { username: 'nobody-here', level: 'live' }).expect(400))
        .body.code,
    ).toBe('sharing.unknown_grantee');
    expect(
      (
        await owner.api
          .post(`/v1/devices/${device.id}/shares`, { username: friend.username, user_id: friend.id, level: 'live' })
          .expect(400)
      ).body.code,
    ).toBe('sharing.unknown_grantee');
    const past = new Date(t.clock.nowMs() - 1000).toISOString();
    expect(
      (
        await owner.api
          .post(`/v1/devices/${device.id}/shares`, { user_id: friend.id, level: 'live', expires_at: past })
          .expect(400)
      ).body.code,
    ).toBe('sharing.expired');
    expect(
      (await friend.api.post(`/v1/devices/${device.id}/shares`, { user_id: friend.id, level: 'full' }).expect(404)).body
        .code,
    ).toBe('device.not_found');
  });

  it('hands a device to another user, ending its shares', async () => {
    const owner = await person();
    const heir = await person();
    const friend = await person();
    const device = await deviceOf(owner.api);
    await owner.api.post(`/v1/devices/${device.id}/shares`, { user_id: friend.id, level: 'live' }).expect(201);
    const moved = await owner.api.post(`/v1/devices/${device.id}/transfer`, { user_id: heir.id }).expect(200);
    expect(moved.body.data.owner_id).toBe(heir.id);
    expect(await deviceIds(owner.api)).toEqual([]);
    expect(await deviceIds(heir.api)).toEqual([device.id]);
    expect(await deviceIds(friend.api)).toEqual([]);
  });

  it('limits a key linked to a device to that device, and lets a tracker app write with it', async () => {
    // (Making keys needs api_keys:write, which the Developer role holds; a User alone has it not yet.)
    const anna = await createUser(t.app, ['role_user', 'role_developer']);
    const api = t.as(anna.token);
    const phone = await deviceOf(api, 'Phone');
    const other = await deviceOf(api, 'Tablet');
    const made = await api
      .post('/v1/api-keys', { name: 'phone', scopes: ['gps:write_own', 'gps:read_own'] })
      .expect(201);
    const { key, id: keyId } = made.body;
    await api.patch(`/v1/devices/${phone.id}`, { api_key_id: keyId }).expect(200);
    const tracker = t.as(key);
    const sent = await tracker.raw({
      method: 'POST',
      url: `/v1/ingest/osmand?id=${key}&lat=54.1&lon=10.1&timestamp=1700000000`,
    });
    expect(sent.status).toBe(200);
    await pointAt(api, other.id, 0);
    const seen = (await tracker.get('/v1/gps/current/devices').expect(200)).body;
    expect(seen.map((p) => p.device_id)).toEqual([phone.id]);
  });

  it('answers an OwnTracks location post with the cards and latest locations of the devices shared with the user', async () => {
    const owner = await person();
    const boat = await deviceOf(owner.api, 'Sea Eagle');
    await pointAt(owner.api, boat.id, 0, 54.5);
    const unshared = await deviceOf(owner.api, 'Private car');
    await pointAt(owner.api, unshared.id, 0);
    // (Making keys needs api_keys:write, which the Developer role holds.)
    const jane = await createUser(t.app, ['role_user', 'role_developer']);
    const janeApi = t.as(jane.token);
    await owner.api.post(`/v1/devices/${boat.id}/shares`, { user_id: jane.id, level: 'live' }).expect(201);
    const phone = await deviceOf(janeApi, 'Pixel');
    const made = janeApi.post('/v1/api-keys', { name: 'owntracks', scopes: ['gps:write_own', 'gps:read_own'] });
    const { key, id: keyId } = (await made.expect(201)).body;
    await janeApi.patch(`/v1/devices/${phone.id}`, { api_key_id: keyId }).expect(200);

    // As the OwnTracks app posts it (../shared/protocols/device-clients.md, "OwnTracks").
    const body =
      '{"_type":"location","topic":"owntracks/jane/pixel7","qos":1,"retained":true,"created_at":1718370000,"_id":"a1b2c3d4","source":"fused","t":"u","batt":80,"bs":1,"acc":12,"lat":48.856826,"lon":2.292713,"alt":35,"vel":4,"cog":270,"tst":1718369990,"m":1,"conn":"w","inregions":[],"tid":"p7"}';
    const answer = await t.as(null).raw({
      method: 'POST',
      url: '/v1/ingest/owntracks',
      headers: {
        'content-type': 'application/json',
        authorization: `Basic ${Buffer.from(`jane:${key}`).toString('base64')}`,
      },
      payload: body,
    });
    expect(answer.status).toBe(200);
    const latest = (await owner.api.get('/v1/gps/current', { query: { device_id: boat.id } }).expect(200)).body.data;
    expect(answer.body).toEqual([
      { _type: 'card', topic: `owntracks/waygate/${boat.id}`, tid: 'SE', name: 'Sea Eagle' },
      {
        _type: 'location',
        topic: `owntracks/waygate/${boat.id}`,
        tid: 'SE',
        lat: 54.5,
        lon: 10.1,
        tst: Math.floor(Date.parse(latest.timestamp) / 1000),
        vel: 1,
      },
    ]);
  });

  it('is switched off by tracking.self_service, for users without the global permissions only', async () => {
    const anna = await person();
    await admin.patch('/v1/system-config/tracking.self_service', { value: false }).expect(200);
    try {
      expect((await anna.api.get('/v1/devices').expect(403)).body).toEqual({
        error: 'Forbidden',
        message: 'Self-service tracking is switched off on this instance (system config tracking.self_service)',
        code: 'sharing.self_service_off',
      });
      await admin.get('/v1/devices').expect(200);
    } finally {
      await admin.patch('/v1/system-config/tracking.self_service', { value: true }).expect(200);
    }
  });

  it('gives existing devices an owner and every new one its creator', async () => {
    const created = (await admin.post('/v1/devices', { name: 'Fleet van' }).expect(201)).body.data;
    expect(created.owner_id).toBe(await adminIdOf(t));
  });
});
