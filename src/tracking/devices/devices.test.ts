import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unchecked, type Client } from '../../../test/client.js';
import {
  adminIdOf,
  buildTestApp,
  createApiKey,
  createRoleWith,
  createUser,
  expectIdChecks,
  expectPermissionChecks,
  login,
  UNKNOWN_ID,
  TEST_ADMIN,
  type TestApp,
} from '../../../test/helpers.js';

describe('devices', () => {
  let t: TestApp;
  let admin: string;
  let api: Client;
  beforeAll(async () => {
    t = await buildTestApp();
    admin = await login(t.app, 'admin', TEST_ADMIN.password);
    api = t.as(admin);
  });
  afterAll(() => t.close());

  it('creates a device with 201 and reads it back', async () => {
    const created = await api
      .post('/v1/devices', { name: 'Sailboat', description: 'Blue hull', device_type: 'tracker-v2' })
      .expect(201);
    const device = created.body.data;
    expect(device).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Sailboat',
      description: 'Blue hull',
      device_type: 'tracker-v2',
      is_active: true,
      is_public: false,
      color: null,
      icon: 'generic',
      api_key_id: null,
      owner_id: await adminIdOf(t),
      offline_after_minutes: null,
      speed_limit_kmh: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect((await api.get(`/v1/devices/${device.id}`).expect(200)).body.data).toEqual(device);
  });

  it('requires a name, and PATCH at least one field', async () => {
    expect((await api.post('/v1/devices', unchecked({ description: 'x' }))).body).toEqual({
      error: 'BadRequest',
      message: "Body field 'name' is required",
      code: 'request.validation',
    });
    const device = (await api.post('/v1/devices', { name: 'n' }).expect(201)).body.data;
    for (const body of [{}, { id: device.id, type: 'boat' }]) {
      expect((await api.patch(`/v1/devices/${device.id}`, body)).body).toEqual({
        error: 'BadRequest',
        message:
          'Give at least one of: name, description, device_type, is_public, color, icon, offline_after_minutes, speed_limit_kmh, api_key_id, is_active',
        code: 'request.validation',
      });
    }
  });

  it('changes only the fields sent', async () => {
    const device = (await api.post('/v1/devices', { name: 'Van', description: 'White' }).expect(201)).body.data;
    const response = await api.patch(`/v1/devices/${device.id}`, { is_active: false }).expect(200);
    expect(response.body.data).toMatchObject({ name: 'Van', description: 'White', is_active: false });
  });

  it('makes a device public (is_public) on create or by PATCH, for whoever may update devices', async () => {
    const created = (await api.post('/v1/devices', { name: 'Ferry', is_public: true }).expect(201)).body.data;
    expect(created.is_public).toBe(true);
    const patched = await api.patch(`/v1/devices/${created.id}`, { is_public: false }).expect(200);
    expect(patched.body.data).toMatchObject({ name: 'Ferry', is_public: false });
    const reader = (await createApiKey(t.app, admin, { name: 'device reader', scopes: ['devices:read'] })).key;
    expect((await t.as(reader).patch(`/v1/devices/${created.id}`, { is_public: true })).status).toBe(403);
    expect((await api.get(`/v1/devices/${created.id}`).expect(200)).body.data.is_public).toBe(false);
  });

  it('takes a colour (#rrggbb, kept in lower case, null to clear) and an icon, on create or by PATCH', async () => {
    const boat = (await api.post('/v1/devices', { name: 'Kutter', color: '#1F6FEB', icon: 'boat' }).expect(201)).body
      .data;
    expect(boat).toMatchObject({ name: 'Kutter', color: '#1f6feb', icon: 'boat' });
    const patched = await api.patch(`/v1/devices/${boat.id}`, { color: null, icon: 'person' }).expect(200);
    expect(patched.body.data).toEqual({ ...boat, color: null, icon: 'person', updated_at: expect.any(String) });
    const recoloured = await api.patch(`/v1/devices/${boat.id}`, { color: '#00aa55' }).expect(200);
    expect(recoloured.body.data).toMatchObject({ color: '#00aa55', icon: 'person' });

    for (const color of ['red', '#12345', '#1234567', '#gggggg', 'rgb(0,0,0)'])
      expect((await api.patch(`/v1/devices/${boat.id}`, { color }).expect(400)).body).toEqual({
        error: 'BadRequest',
        message: 'Body field \'color\' must match pattern "^#[0-9A-Fa-f]{6}$"',
        code: 'request.validation',
      });
    const tractor = await api.patch(`/v1/devices/${boat.id}`, unchecked({ icon: 'tractor' })).expect(400);
    expect(tractor.body.code).toBe('request.validation');
    expect((await api.get(`/v1/devices/${boat.id}`).expect(200)).body.data).toMatchObject({
      color: '#00aa55',
      icon: 'person',
    });
  });

  it('takes the event settings offline_after_minutes and speed_limit_kmh, null to clear, within their bounds', async () => {
    const made = (await api.post('/v1/devices', { name: 'Ferry', speed_limit_kmh: 45.5 }).expect(201)).body.data;
    expect([made.offline_after_minutes, made.speed_limit_kmh]).toEqual([null, 45.5]);
    const changed = (await api.patch(`/v1/devices/${made.id}`, { offline_after_minutes: 30 }).expect(200)).body.data;
    expect([changed.offline_after_minutes, changed.speed_limit_kmh]).toEqual([30, 45.5]);
    const cleared = (await api.patch(`/v1/devices/${made.id}`, { speed_limit_kmh: null }).expect(200)).body.data;
    expect([cleared.offline_after_minutes, cleared.speed_limit_kmh]).toEqual([30, null]);
    expect((await api.get(`/v1/devices/${made.id}`).expect(200)).body.data).toEqual(cleared);

    const refused = async (body: object) =>
      (await api.patch(`/v1/devices/${made.id}`, unchecked(body)).expect(400)).body.message;
    expect(await refused({ offline_after_minutes: 0 })).toBe("Body field 'offline_after_minutes' must be >= 1");
    expect(await refused({ offline_after_minutes: 43_201 })).toBe(
      "Body field 'offline_after_minutes' must be <= 43200",
    );
    expect(await refused({ offline_after_minutes: 1.5 })).toBe(
      "Body field 'offline_after_minutes' must be integer,null",
    );
    expect(await refused({ speed_limit_kmh: 0 })).toBe("Body field 'speed_limit_kmh' must be > 0");
  });

  it('answers 404 for unknown ids and 400 for ids that are not UUIDs', () =>
    expectIdChecks(t.app, admin, '/v1/devices', { message: 'Device not found', code: 'device.not_found' }));

  it('pages devices with a default limit of 10', async () => {
    for (let i = 0; i < 11; i++) await api.post('/v1/devices', { name: `fleet ${i}` });
    const body = (await api.get('/v1/devices').expect(200)).body;
    expect(body.data).toHaveLength(10);
    expect(body.pagination).toMatchObject({ page: 1, limit: 10 });
    expect(body._links.next).toContain('page=2');
  });

  it('pages every device for the map by id, each once, and refuses a limit past 5,000 or an id that is no UUID', async () => {
    const made = [];
    for (let i = 0; i < 3; i++) made.push((await api.post('/v1/devices', { name: `map ${i}` }).expect(201)).body.data);
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const query = after ? { limit: 2, after } : { limit: 2 };
      const page = (await api.get('/v1/map/devices', { query }).expect(200)).body;
      expect(page.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.data.map((device) => device.id));
      if (page.next === null) break;
      expect(page.next).toBe(page.data.at(-1)?.id);
      after = page.next;
    }
    expect(seen).toEqual([...seen].sort());
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(expect.arrayContaining(made.map((device) => device.id)));
    expect(seen).toHaveLength((await api.get('/v1/devices').expect(200)).body.pagination.total);

    const refused = async (query: Record<string, string>) =>
      (await api.get('/v1/map/devices', { query: unchecked(query) }).expect(400)).body.message;
    expect(await refused({ limit: '5001' })).toBe("Query parameter 'limit' must be <= 5000");
    expect(await refused({ after: 'nope' })).toBe('Query parameter \'after\' must match format "uuid"');
  });

  it('deletes with 204', async () => {
    const device = (await api.post('/v1/devices', { name: 'gone' }).expect(201)).body.data;
    const response = await api.delete(`/v1/devices/${device.id}`).expect(204);
    expect((await api.get(`/v1/devices/${device.id}`)).status).toBe(404);
  });

  describe('linking an API key', () => {
    it('links the key and unlinks any key the device had before, and moves a key from another device', async () => {
      const first = await createApiKey(t.app, admin, { name: 'first', scopes: ['gps:write'] });
      const second = await createApiKey(t.app, admin, { name: 'second', scopes: ['gps:write'] });
      const device = (await api.post('/v1/devices', { name: 'linked', api_key_id: first.id }).expect(201)).body.data;
      expect(device.api_key_id).toBe(first.id);
      const relinked = await api.patch(`/v1/devices/${device.id}`, { api_key_id: second.id }).expect(200);
      expect(relinked.body.data.api_key_id).toBe(second.id);
      const other = (await api.post('/v1/devices', { name: 'other', api_key_id: second.id }).expect(201)).body.data;
      expect(other.api_key_id).toBe(second.id);
      expect((await api.get(`/v1/devices/${device.id}`).expect(200)).body.data.api_key_id).toBeNull();
    });

    it('lets a user link only a key they own, or a system key', async () => {
      const roleId = await createRoleWith(t.app, 'Fleet Operators', [
        'devices:read',
        'devices:write',
        'api_keys:read',
        'api_keys:write',
        'gps:write',
      ]);
      const operator = await createUser(t.app, [roleId]);
      const own = await createApiKey(t.app, operator.token, { name: 'mine', scopes: ['gps:write'] });
      const foreign = await createApiKey(t.app, admin, { name: 'not theirs', scopes: ['gps:write'] });
      const systemKeyId = (
        await t.database.db.selectFrom('api_keys').select('id').where('is_system', '=', true).executeTakeFirstOrThrow()
      ).id;

      expect((await t.as(operator.token).post('/v1/devices', { name: 'ok', api_key_id: own.id })).status).toBe(201);
      expect((await t.as(operator.token).post('/v1/devices', { name: 'sys', api_key_id: systemKeyId })).status).toBe(
        201,
      );
      const refused = await t
        .as(operator.token)
        .post('/v1/devices', { name: 'no', api_key_id: foreign.id })
        .expect(403);
      expect(refused.body).toEqual({
        error: 'Forbidden',
        message: 'Only a key you own, or a system key, may be linked to a device',
        code: 'device.api_key_not_linkable',
      });
      const count = await t.database.db.selectFrom('devices').select('id').where('name', '=', 'no').execute();
      expect(count).toHaveLength(0);
    });

    it('answers an unknown key with 400', async () => {
      const response = await api
        .post('/v1/devices', { name: 'x', api_key_id: '00000000-0000-4000-8000-000000000000' })
        .expect(400);
      expect(response.body.message).toBe('api_key_id does not name an existing API key');
    });
  });

  it('needs devices:read, devices:write and devices:delete', async () => {
    const reader = await createApiKey(t.app, admin, { name: 'device reader', scopes: ['devices:read'] });
    expect((await t.as(reader.key).get('/v1/devices')).status).toBe(200);
    expect((await t.as(reader.key).post('/v1/devices', { name: 'x' })).status).toBe(403);
    expect((await t.as(null).get('/v1/devices')).status).toBe(401);
    await expectPermissionChecks(t.app, admin, [
      { method: 'GET', url: '/v1/devices', permission: 'devices:read' },
      { method: 'GET', url: `/v1/devices/${UNKNOWN_ID}`, permission: 'devices:read' },
      { method: 'POST', url: '/v1/devices', permission: 'devices:write', payload: {} },
      { method: 'PATCH', url: `/v1/devices/${UNKNOWN_ID}`, permission: 'devices:write', payload: { name: 'x' } },
      { method: 'DELETE', url: `/v1/devices/${UNKNOWN_ID}`, permission: 'devices:delete' },
    ]);
  });
});
