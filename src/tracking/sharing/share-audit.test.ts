import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '../../../test/client.js';
import { adminIdOf, buildTestApp, createUser, login, TEST_ADMIN, type TestApp } from '../../../test/helpers.js';

const SPEEDS = { speed_kmh: 1, speed_mps: 0.28, speed_mph: 0.62, speed_knots: 0.54 };

/**
 * Shares and hand-overs on the activity log (issue 43): each share made, changed and ended, and each device handed
 * to another user, is an audit event on the owner's log, written with the change; and a deleted device's grantees
 * re-read what they reach at once.
 */
describe('shares and hand-overs of devices', () => {
  let t: TestApp;
  let admin: Client;
  let adminId: string;
  beforeAll(async () => {
    t = await buildTestApp();
    admin = t.as(await login(t.app, 'admin', TEST_ADMIN.password));
    adminId = await adminIdOf(t);
  });
  afterAll(() => t.close());

  const person = async () => {
    const user = await createUser(t.app);
    return { id: user.id, username: user.username, api: t.as(user.token) };
  };
  const deviceOf = async (api: Client, name = 'Phone') =>
    (await api.post('/v1/devices', { name }).expect(201)).body.data;
  const pointOf = async (api: Client, deviceId: string) =>
    (
      await api
        .post('/v1/gps', {
          device_id: deviceId,
          latitude: 54.3,
          longitude: 10.1,
          ...SPEEDS,
          timestamp: Math.floor(t.clock.nowMs() / 1000),
        })
        .expect(201)
    ).body.data;

  /** The events of a resource type on the user's own activity log, oldest first, with the fields under test. */
  const ownEvents = async (api: Client, resourceType: string) =>
    (
      await api.get('/v1/users/me/audit', { query: { resource_type: resourceType, limit: 100 } }).expect(200)
    ).body.events
      .map((event) => ({
        event_type: event.event_type,
        user_id: event.user_id,
        actor_id: event.actor_id,
        resource_type: event.resource_type,
        resource_id: event.resource_id,
        metadata: event.metadata,
        status: event.status,
      }))
      .reverse();

  it('records each share made, made again, changed and ended on the owner’s log, by who did it', async () => {
    const owner = await person();
    const friend = await person();
    const device = await deviceOf(owner.api);
    const expiresAt = new Date(t.clock.nowMs() + 86_400_000).toISOString();
    const made = (
      await owner.api
        .post(`/v1/devices/${device.id}/shares`, { user_id: friend.id, level: 'history', history_days: 7 })
        .expect(201)
    ).body.data;
    await owner.api
      .post(`/v1/devices/${device.id}/shares`, { user_id: friend.id, level: 'full', expires_at: expiresAt })
      .expect(200);
    // A holder of devices:write changes and ends it on the owner's behalf: the owner's log names them as actor.
    await admin.patch(`/v1/devices/${device.id}/shares/${made.id}`, { level: 'live' }).expect(200);
    await admin.delete(`/v1/shares/${made.id}`).expect(204);

    const share = { user_id: owner.id, resource_type: 'device_share', resource_id: made.id, status: 'success' };
    const grant = { device_id: device.id, user_id: friend.id, group_id: null };
    expect(await ownEvents(owner.api, 'device_share')).toEqual([
      {
        ...share,
        event_type: 'device_shared',
        actor_id: owner.id,
        metadata: { ...grant, level: 'history', history_days: 7, expires_at: null },
      },
      {
        ...share,
        event_type: 'device_shared',
        actor_id: owner.id,
        metadata: { ...grant, level: 'full', history_days: null, expires_at: expiresAt },
      },
      {
        ...share,
        event_type: 'device_share_changed',
        actor_id: adminId,
        metadata: { ...grant, level: 'live', history_days: null, expires_at: expiresAt },
      },
      {
        ...share,
        event_type: 'device_share_ended',
        actor_id: adminId,
        metadata: { ...grant, level: 'live', history_days: null, expires_at: expiresAt },
      },
    ]);
    // The grantee's own log holds none of it.
    expect(await ownEvents(friend.api, 'device_share')).toEqual([]);
  });

  it('records a share of every device with a group, naming no device', async () => {
    const owner = await person();
    const group = (await owner.api.post('/v1/groups', { name: 'Crew' }).expect(201)).body.data;
    const made = (await owner.api.post('/v1/shares', { group_id: group.id, level: 'live' }).expect(201)).body.data;
    expect(await ownEvents(owner.api, 'device_share')).toEqual([
      {
        event_type: 'device_shared',
        user_id: owner.id,
        actor_id: owner.id,
        resource_type: 'device_share',
        resource_id: made.id,
        metadata: {
          device_id: null,
          user_id: null,
          group_id: group.id,
          level: 'live',
          history_days: null,
          expires_at: null,
        },
        status: 'success',
      },
    ]);
  });

  it('records no event for a share that was not made', async () => {
    const owner = await person();
    const device = await deviceOf(owner.api);
    const nobody = crypto.randomUUID();
    const refused = await owner.api.post(`/v1/devices/${device.id}/shares`, { user_id: nobody, level: 'live' });
    expect(refused.status).toBe(400);
    expect(await ownEvents(owner.api, 'device_share')).toEqual([]);
  });

  it('records a hand-over on the logs of both owners', async () => {
    const owner = await person();
    const heir = await person();
    const device = await deviceOf(owner.api);
    await owner.api.post(`/v1/devices/${device.id}/transfer`, { user_id: heir.id }).expect(200);

    const event = {
      event_type: 'device_transferred',
      actor_id: owner.id,
      resource_type: 'device',
      resource_id: device.id,
      metadata: { device_id: device.id, from_user_id: owner.id, to_user_id: heir.id },
      status: 'success',
    };
    expect(await ownEvents(owner.api, 'device')).toEqual([{ ...event, user_id: owner.id }]);
    expect(await ownEvents(heir.api, 'device')).toEqual([{ ...event, user_id: heir.id }]);
  });

  it('makes a deleted device vanish at once for everyone it was shared with', async () => {
    const owner = await person();
    const friend = await person();
    const member = await person();
    const everyDevice = await person();
    const device = await deviceOf(owner.api);
    await pointOf(owner.api, device.id);
    const group = (await owner.api.post('/v1/groups', { name: 'Family' }).expect(201)).body.data;
    const invitation = (
      await owner.api.post(`/v1/groups/${group.id}/invitations`, { username: member.username }).expect(201)
    ).body.data;
    await member.api.post(`/v1/invitations/${invitation.id}/accept`).expect(200);
    await owner.api.post(`/v1/devices/${device.id}/shares`, { user_id: friend.id, level: 'live' }).expect(201);
    await owner.api.post(`/v1/devices/${device.id}/shares`, { group_id: group.id, level: 'live' }).expect(201);
    await owner.api.post('/v1/shares', { user_id: everyDevice.id, level: 'live' }).expect(201);
    const grantees = [friend, member, everyDevice];
    for (const grantee of grantees) {
      // Read now, so what each reaches is cached.
      const seen = (await grantee.api.get('/v1/devices').expect(200)).body.data.map((d) => d.id);
      expect(seen).toEqual([device.id]);
      expect((await grantee.api.get('/v1/gps/current/devices').expect(200)).body).toHaveLength(1);
    }

    // Every node hears which users' grants are forgotten (a node tells its own listeners before answering).
    const told = new Set<string>();
    for (const node of t.nodes) node.services.sharing.onChanged((userIds) => userIds.forEach((id) => told.add(id)));
    await owner.api.delete(`/v1/devices/${device.id}`).expect(204);

    expect([...told].sort()).toEqual([owner.id, friend.id, member.id, everyDevice.id].sort());
    for (const grantee of grantees) {
      expect((await grantee.api.get('/v1/devices').expect(200)).body.data).toEqual([]);
      expect((await grantee.api.get('/v1/gps/current/devices').expect(200)).body).toEqual([]);
    }
  });
});
