import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Client } from '../../../test/client.js';
import {
  adminIdOf,
  buildTestApp,
  createApiKey,
  createUser,
  forbidden,
  login,
  TEST_ADMIN,
  UNAUTHORIZED,
  UNKNOWN_ID,
  type TestApp,
} from '../../../test/helpers.js';

const PUBLIC_URL = 'https://waygate.example';
const SPEEDS = { speed_kmh: 1, speed_mps: 0.28, speed_mph: 0.62, speed_knots: 0.54 };
const ID = expect.stringMatching(/^[0-9a-f-]{36}$/);

/** POST /v1/devices/{id}/key (issue 49): a device's new key, the old one revoked at once. */
describe('POST /v1/devices/{id}/key', () => {
  let t: TestApp;
  let admin: Client;
  let adminId: string;
  beforeAll(async () => {
    t = await buildTestApp({ config: { publicUrl: PUBLIC_URL } });
    adminId = await adminIdOf(t);
  });
  // A fresh session per test: a test that advances the clock past the re-authentication window must not age the
  // admin's sign-in for the tests shuffled after it.
  beforeEach(async () => {
    admin = t.as(await login(t.app, 'admin', TEST_ADMIN.password));
  });
  afterAll(() => t.close());

  /** A registered user (role User only, or with more roles) with a client. */
  const person = async (roles?: string[]) => {
    const user = await createUser(t.app, roles);
    return { ...user, api: t.as(user.token) };
  };
  const deviceOf = async (api: Client, name = 'Phone') =>
    (await api.post('/v1/devices', { name }).expect(201)).body.data;
  /** Posts a point with a device's key (no device_id: the key's device). */
  const post = (key: string) =>
    t.as(key).post('/v1/gps', {
      latitude: 54.3,
      longitude: 10.1,
      ...SPEEDS,
      timestamp: Math.floor(t.clock.nowMs() / 1000),
    });
  /** The key events of the user's own log, oldest first, with the fields under test. */
  const keyEvents = async (api: Client) =>
    (await api.get('/v1/users/me/audit', { query: { resource_type: 'api_key', limit: 100 } }).expect(200)).body.events
      .map((event) => ({
        event_type: event.event_type,
        user_id: event.user_id,
        actor_id: event.actor_id,
        resource_id: event.resource_id,
        metadata: event.metadata,
      }))
      .reverse();

  it("gives an owner's device a first key, and then a new one that keeps its scopes while the old one answers 401 at once", async () => {
    const anna = await person();
    const device = await deviceOf(anna.api);
    const first = await anna.api.post(`/v1/devices/${device.id}/key`).expect(201);
    expect(first.headers.location).toBe(`${PUBLIC_URL}/v1/api-keys/${first.body.id}`);
    expect(first.body).toEqual({
      id: ID,
      key: expect.stringMatching(/^wg_/),
      key_prefix: first.body.key.slice(0, 11),
      name: 'Device: Phone',
      scopes: ['gps:write_own'],
      user_id: anna.id,
      expires_at: null,
      device: { ...device, api_key_id: first.body.id, updated_at: expect.any(String) },
      revoked_key_id: null,
    });
    await post(first.body.key).expect(201);
    await post(first.body.key).expect(201); // on two nodes: cached on both

    const second = await anna.api.post(`/v1/devices/${device.id}/key`, {}).expect(201);
    expect(second.body).toEqual({
      ...first.body,
      id: ID,
      key: expect.stringMatching(/^wg_/),
      key_prefix: second.body.key.slice(0, 11),
      device: { ...device, api_key_id: second.body.id, updated_at: expect.any(String) },
      revoked_key_id: first.body.id,
    });
    expect(second.body.id).not.toBe(first.body.id);
    expect((await post(first.body.key).expect(401)).body).toEqual(UNAUTHORIZED);
    expect((await post(first.body.key).expect(401)).body).toEqual(UNAUTHORIZED);
    const point = (await post(second.body.key).expect(201)).body.data;
    expect(point.device_id).toBe(device.id);
    expect((await anna.api.get(`/v1/devices/${device.id}`).expect(200)).body.data.api_key_id).toBe(second.body.id);
    expect((await admin.get(`/v1/api-keys/${first.body.id}`).expect(404)).body.code).toBe('api_key.not_found');

    const own = { user_id: anna.id, actor_id: anna.id };
    const made = (key: { id: string }) => ({
      ...own,
      event_type: 'api_key_created',
      resource_id: key.id,
      metadata: { name: 'Device: Phone', scopes: ['gps:write_own'], is_system: false, device_id: device.id },
    });
    // (Made and revoked in one transaction, the last two share their time: their order is not told.)
    const events = await keyEvents(anna.api);
    expect(events).toHaveLength(3);
    expect(events).toEqual(
      expect.arrayContaining([
        made(first.body),
        made(second.body),
        {
          ...own,
          event_type: 'api_key_revoked',
          resource_id: first.body.id,
          metadata: { name: 'Device: Phone', device_id: device.id, replaced_by: second.body.id },
        },
      ]),
    );
  });

  it("lets a holder of devices:write replace a user's key: the new key is theirs, with Connect a device's scopes", async () => {
    const ben = await person(['role_user', 'role_developer']);
    const old = await createApiKey(t.app, ben.token, { name: "Ben's tracker", scopes: ['gps:write_own'] });
    const device = (await ben.api.post('/v1/devices', { name: 'Van', api_key_id: old.id }).expect(201)).body.data;
    await post(old.key).expect(201);

    const replaced = await admin.post(`/v1/devices/${device.id}/key`).expect(201);
    expect(replaced.body).toMatchObject({
      name: 'Device: Van',
      scopes: ['gps:write'],
      user_id: adminId,
      revoked_key_id: old.id,
      device: { id: device.id, owner_id: ben.id, api_key_id: replaced.body.id },
    });
    expect((await post(old.key).expect(401)).body).toEqual(UNAUTHORIZED);
    expect((await post(replaced.body.key).expect(201)).body.data.device_id).toBe(device.id);
    // The owner's log tells them their key was revoked, and by whom.
    expect(await keyEvents(ben.api)).toEqual([
      expect.objectContaining({ event_type: 'api_key_created', resource_id: old.id }),
      {
        event_type: 'api_key_revoked',
        user_id: ben.id,
        actor_id: adminId,
        resource_id: old.id,
        metadata: { name: "Ben's tracker", device_id: device.id, replaced_by: replaced.body.id },
      },
    ]);
  });

  it('answers a stranger 404 and a grantee 403, and leaves the key as it was', async () => {
    const owner = await person();
    const friend = await person();
    const stranger = await person();
    const device = await deviceOf(owner.api);
    const key = (await owner.api.post(`/v1/devices/${device.id}/key`).expect(201)).body;
    await owner.api.post(`/v1/devices/${device.id}/shares`, { user_id: friend.id, level: 'full' }).expect(201);

    expect((await stranger.api.post(`/v1/devices/${device.id}/key`).expect(404)).body).toEqual({
      error: 'NotFound',
      message: 'Device not found',
      code: 'device.not_found',
    });
    expect((await friend.api.post(`/v1/devices/${device.id}/key`).expect(403)).body).toEqual({
      error: 'Forbidden',
      message: 'Only the owner of the device (or a holder of devices:write) may change it',
      code: 'device.not_owner',
    });
    expect((await admin.post(`/v1/devices/${UNKNOWN_ID}/key`).expect(404)).body.code).toBe('device.not_found');
    await post(key.key).expect(201);
    expect((await owner.api.get(`/v1/devices/${device.id}`).expect(200)).body.data.api_key_id).toBe(key.id);
  });

  it('asks a session signed in more than 15 minutes ago for its password, and an API key for its scopes', async () => {
    const carla = await person(['role_user', 'role_developer']);
    const device = await deviceOf(carla.api);
    const keyWith = async (scopes: string[]) =>
      (await createApiKey(t.app, carla.token, { name: scopes.join(' '), scopes })).key;
    const [narrow, tool, reader] = [
      await keyWith(['devices:write_own']),
      await keyWith(['devices:write_own', 'gps:write_own']),
      await keyWith(['devices:read_own']),
    ];
    t.clock.advance(16 * 60_000);
    expect((await carla.api.post(`/v1/devices/${device.id}/key`).expect(403)).body.code).toBe(
      'auth.reauthentication_required',
    );
    const wrong = await carla.api.post(`/v1/devices/${device.id}/key`, { current_password: 'not it' }).expect(400);
    expect(wrong.body.code).toBe('password_change.wrong_current_password');
    expect((await carla.api.get(`/v1/devices/${device.id}`).expect(200)).body.data.api_key_id).toBeNull();
    await carla.api.post(`/v1/devices/${device.id}/key`, { current_password: carla.password }).expect(201);

    // A key is not asked again, needs no api_keys:write, but makes only a key within its own scopes.
    expect((await t.as(narrow).post(`/v1/devices/${device.id}/key`).expect(403)).body).toEqual({
      error: 'Forbidden',
      message: "Scope 'gps:write_own' exceeds your own permissions",
      code: 'role.scope_beyond_caller',
    });
    const made = await t.as(tool).post(`/v1/devices/${device.id}/key`).expect(201);
    expect(made.body).toMatchObject({ scopes: ['gps:write_own'], user_id: carla.id });
    expect((await t.as(reader).post(`/v1/devices/${device.id}/key`).expect(403)).body).toEqual(
      forbidden('devices:write'),
    );
  });

  it('refuses a device that reports with a system key (409), which stays as it was', async () => {
    const systemKeyId = (
      await t.database.db.selectFrom('api_keys').select('id').where('is_system', '=', true).executeTakeFirstOrThrow()
    ).id;
    const device = (await admin.post('/v1/devices', { name: 'Buoy', api_key_id: systemKeyId }).expect(201)).body.data;
    expect((await admin.post(`/v1/devices/${device.id}/key`).expect(409)).body).toEqual({
      error: 'Conflict',
      message:
        'The device reports with a system key, which is never revoked this way; link another key to it first (PATCH /v1/devices/{id} with api_key_id)',
      code: 'api_key.system_key_on_device',
    });
    expect((await admin.get(`/v1/devices/${device.id}`).expect(200)).body.data.api_key_id).toBe(systemKeyId);
    await admin.get(`/v1/api-keys/${systemKeyId}`).expect(200);
  });
});
