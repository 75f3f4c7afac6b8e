import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unchecked } from '../../../test/client.js';
import { buildTestApp, createUser, UNKNOWN_ID, type TestApp } from '../../../test/helpers.js';

describe('notification rules', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(() => t.close());

  const newDevice = async (token: string) =>
    (await t.as(token).post('/v1/devices', { name: 'Phone' }).expect(201)).body.data.id;

  async function userWithChannel() {
    const user = await createUser(t.app);
    const api = t.as(user.token);
    const channelId = (
      await api.post('/v1/notification-channels', { type: 'email', name: 'Mail', config: {} }).expect(201)
    ).body.data.id;
    return { user, api, channelId };
  }

  it('creates, reads, changes and deletes a rule of the own devices, geofences and channels', async () => {
    const { user, api, channelId } = await userWithChannel();
    const deviceId = await newDevice(user.token);
    const geofenceId = (
      await api.post('/v1/geofences', { name: 'Home', latitude: 54, longitude: 10, radius_km: 0.2 }).expect(201)
    ).body.data.id;
    const made = (
      await api
        .post('/v1/notification-rules', {
          name: 'Home',
          event_types: ['geofence_enter', 'geofence_exit'],
          device_ids: [deviceId],
          geofence_ids: [geofenceId],
          channel_ids: [channelId],
          quiet_hours: { from: '22:00', to: '07:00' },
        })
        .expect(201)
    ).body.data;
    const rule = {
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Home',
      event_types: ['geofence_enter', 'geofence_exit'],
      device_ids: [deviceId],
      geofence_ids: [geofenceId],
      channel_ids: [channelId],
      quiet_hours: { from: '22:00', to: '07:00' },
      enabled: true,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    };
    expect(made).toEqual(rule);
    expect((await api.get('/v1/notification-rules').expect(200)).body.data).toEqual([made]);
    const changed = (
      await api
        .patch(`/v1/notification-rules/${made.id}`, { device_ids: null, quiet_hours: null, enabled: false })
        .expect(200)
    ).body.data;
    expect(changed).toEqual({ ...rule, device_ids: null, quiet_hours: null, enabled: false });
    // A channel deleted leaves the rules naming it.
    const second = (
      await api.post('/v1/notification-channels', { type: 'email', name: 'Second', config: {} }).expect(201)
    ).body.data.id;
    await api.patch(`/v1/notification-rules/${made.id}`, { channel_ids: [channelId, second] }).expect(200);
    await api.delete(`/v1/notification-channels/${channelId}`).expect(204);
    expect((await api.get(`/v1/notification-rules/${made.id}`).expect(200)).body.data.channel_ids).toEqual([second]);
    await api.delete(`/v1/notification-rules/${made.id}`).expect(204);
    expect((await api.get('/v1/notification-rules').expect(200)).body.data).toEqual([]);
  });

  it("refuses another user's channel, a device or geofence the user cannot see, with 400 naming the field", async () => {
    const { user: stranger, channelId: theirChannel } = await userWithChannel();
    const theirDevice = await newDevice(stranger.token);
    const theirGeofence = (
      await t
        .as(stranger.token)
        .post('/v1/geofences', { name: 'Theirs', latitude: 1, longitude: 1, radius_km: 1 })
        .expect(201)
    ).body.data.id;
    const { api, channelId } = await userWithChannel();
    const base = { name: 'R', event_types: ['sos'], channel_ids: [channelId] };
    const refused = async (body: Record<string, unknown>, message: string) =>
      expect((await api.post('/v1/notification-rules', unchecked({ ...base, ...body })).expect(400)).body).toEqual({
        error: 'BadRequest',
        code: 'request.validation',
        message,
      });
    await refused(
      { channel_ids: [theirChannel] },
      `Body field 'channel_ids' names a channel that is not yours: ${theirChannel}`,
    );
    await refused(
      { device_ids: [theirDevice] },
      `Body field 'device_ids' names a device you cannot see: ${theirDevice}`,
    );
    await refused(
      { geofence_ids: [theirGeofence] },
      `Body field 'geofence_ids' names a geofence you cannot see: ${theirGeofence}`,
    );
    const bad = (await api.post('/v1/notification-rules', unchecked({ ...base, event_types: ['boom'] })).expect(400))
      .body;
    expect(bad.message).toContain("Body field 'event_types.0' must be one of: geofence_enter");
    const quiet = (
      await api.post('/v1/notification-rules', unchecked({ ...base, quiet_hours: { from: '25:00', to: '07:00' } }))
    ).body;
    expect(quiet).toMatchObject({ code: 'request.validation' });
  });

  it("answers 404 for another user's rule", async () => {
    const { api, channelId } = await userWithChannel();
    const id = (
      await api
        .post('/v1/notification-rules', { name: 'R', event_types: ['sos'], channel_ids: [channelId] })
        .expect(201)
    ).body.data.id;
    const other = t.as((await createUser(t.app)).token);
    const notFound = { error: 'NotFound', message: 'Notification rule not found', code: 'notification.rule_not_found' };
    expect((await other.patch(`/v1/notification-rules/${id}`, { name: 'x' }).expect(404)).body).toEqual(notFound);
    expect((await other.delete(`/v1/notification-rules/${id}`).expect(404)).body).toEqual(notFound);
    await api.delete(`/v1/notification-rules/${UNKNOWN_ID}`).expect(404);
  });
});
