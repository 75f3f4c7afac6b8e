import { createHash, randomUUID } from 'node:crypto';
import type { FastifyInstance, HTTPMethods } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { client, type RawAnswer, type RequestBody } from '../../../test/client.js';
import {
  adminIdOf,
  buildTestApp,
  createApiKey,
  createRoleWith,
  createUser,
  forbidden,
  login,
  TEST_ADMIN,
  TEST_SYSTEM_KEY,
  twoNodes,
  UNAUTHORIZED,
  type TestApp,
} from '../../../test/helpers.js';
import { buildApp } from '../../app.js';
import { NO_SCOPES_MESSAGE } from './service.js';

/** A request: method, URL and optional JSON body. */
type RouteCall = [HTTPMethods, string, object?];

const KEY_NOT_FOUND = { error: 'NotFound', message: 'API key not found', code: 'api_key.not_found' };

function expectResponse(response: RawAnswer, status: number, body?: unknown) {
  expect({ status: response.status, body: body === undefined ? undefined : response.body }).toEqual({
    status,
    body,
  });
}

const expectForbidden = (response: RawAnswer, message: string, code: string) =>
  expectResponse(response, 403, { error: 'Forbidden', message, code });
const expectBadRequest = (response: RawAnswer, message: string | RegExp, code: string) =>
  expectResponse(response, 400, {
    error: 'BadRequest',
    message: typeof message === 'string' ? message : expect.stringMatching(message),
    code,
  });

/** A probe for what a credential may do: GET /v1/roles needs roles:read. */
const readRoles = (app: FastifyInstance, token: string) => client(app, token).get('/v1/roles');

const sha256Hex = (value: string) => createHash('sha256').update(value).digest('hex');

const auditEventsFor = (t: TestApp, eventType: string, resourceId: string) =>
  t.database.db
    .selectFrom('audit_events')
    .selectAll()
    .where('event_type', '=', eventType)
    .where('resource_id', '=', resourceId)
    .execute();

type TestUser = Awaited<ReturnType<typeof createUser>>;

/** The permissions of the custom role used throughout: may manage keys and read GPS data. */
const KEY_MAKER_PERMISSIONS = ['api_keys:read', 'api_keys:write', 'gps:read'];

describe('creating and reading API keys', () => {
  let t: TestApp;
  let admin: string;
  let adminId: string;
  let keyMaker: TestUser;
  let developer: TestUser;
  let ordinary: TestUser;

  beforeAll(async () => {
    t = await buildTestApp();
    admin = await login(t.app, TEST_ADMIN.username, TEST_ADMIN.password);
    adminId = await adminIdOf(t);
    await createRoleWith(t.app, 'Key Makers', KEY_MAKER_PERMISSIONS);
    keyMaker = await createUser(t.app, ['role_key_makers']);
    developer = await createUser(t.app, ['role_user', 'role_developer']);
    ordinary = await createUser(t.app);
  });
  afterAll(() => t.close());

  const createAs = (token: string, body: RequestBody<'post', '/v1/api-keys'>) => t.as(token).post('/v1/api-keys', body);
  const updateAs = (token: string, id: string, body: RequestBody<'patch', '/v1/api-keys/{id}'>) =>
    t.as(token).patch(`/v1/api-keys/${id}`, body);

  it('answers 201 with exactly id, a wg_ key of at least 40 characters, name, scopes and expires_at', async () => {
    const response = await createAs(admin, {
      name: 'ci pipeline',
      description: 'for CI',
      scopes: ['roles:read'],
    }).expect(201);
    expectResponse(response, 201, {
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      key: expect.stringMatching(/^wg_[A-Za-z0-9_-]{37,}$/),
      name: 'ci pipeline',
      scopes: ['roles:read'],
      expires_at: null,
    });
    expect(response.body.key.length).toBeGreaterThanOrEqual(40);
  });

  it('says what a key created without scopes can do, and the 403 it then meets names the missing permission', async () => {
    const response = await createAs(admin, { name: 'no scopes yet' }).expect(201);
    expectResponse(response, 201, {
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      key: expect.stringMatching(/^wg_/),
      name: 'no scopes yet',
      scopes: [],
      expires_at: null,
      message: NO_SCOPES_MESSAGE,
    });
    const { key } = response.body;
    expectResponse(await t.as(key).get('/v1/users/me'), 200, expect.anything());
    expectResponse(await t.as(key).get('/v1/gps'), 403, forbidden('gps:read'));
    // A system key holds every permission: nothing to warn about.
    expect((await createAs(admin, { name: 'system, no scopes', is_system: true })).body).not.toHaveProperty('message');
  });

  it('never shows the key again: list and get carry only key_prefix, a prefix of the key', async () => {
    const { id, key } = await createApiKey(t.app, admin, { name: 'shown once', scopes: ['roles:read'] });

    const got = await t.as(admin).get(`/v1/api-keys/${id}`).expect(200);
    expectResponse(got, 200, {
      data: {
        id,
        key_prefix: expect.any(String),
        name: 'shown once',
        description: null,
        scopes: ['roles:read'],
        is_active: true,
        is_system: false,
        user_id: adminId,
        expires_at: null,
        last_used_at: null,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      },
      _links: { self: expect.stringMatching(new RegExp(`/v1/api-keys/${id}$`)) },
    });
    const prefix: string = got.body.data.key_prefix;
    expect(key.startsWith(prefix) && prefix.length < key.length).toBe(true);

    const list = await t.as(admin).get('/v1/api-keys').expect(200);
    const listed = list.body.data.find((k) => k.id === id);
    expect(listed).toEqual(got.body.data);
    for (const body of [got.text, list.text]) {
      expect(body).not.toContain(key);
      expect(body).not.toMatch(/"key":/);
    }
  });

  it('stores only the SHA-256 hex of the key, never the key itself', async () => {
    const { id, key } = await createApiKey(t.app, admin, { name: 'hashed' });
    const row = await t.database.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.key_hash).toBe(sha256Hex(key));
    expect(Object.values(row).filter((value) => String(value).includes(key))).toEqual([]);
  });

  it('authenticates with the new key at once, limited to its scopes', async () => {
    const { key } = await createApiKey(t.app, admin, { name: 'role reader', scopes: ['roles:read'] });
    expectResponse(await readRoles(t.app, key), 200);
    expectResponse(await t.as(key).post('/v1/roles', { name: 'Made By Key' }), 403, forbidden('roles:write'));
    expectResponse(await t.as(key).get('/v1/api-keys'), 403, forbidden('api_keys:read'));
  });

  describe('scopes must be a subset of the creator’s own permissions', () => {
    it('lets a key maker create a key with a scope they hold', async () => {
      const response = await createAs(keyMaker.token, { name: 'gps reader', scopes: ['gps:read'] });
      expectResponse(response, 201, expect.objectContaining({ scopes: ['gps:read'] }));
    });

    it.each(['gps:write', 'gps:*', '*:*'])('refuses a key maker the scope %s with 403', async (scope) => {
      expectForbidden(
        await createAs(keyMaker.token, { name: 'too much', scopes: [scope] }),
        `Scope '${scope}' exceeds your own permissions`,
        'role.scope_beyond_caller',
      );
    });

    it('lets the super admin hand out *:*', async () => {
      const response = await createAs(admin, { name: 'everything', scopes: ['*:*'] });
      expectResponse(response, 201, expect.objectContaining({ scopes: ['*:*'] }));
    });

    it('applies the same rule when PATCHing scopes, leaving the key unchanged on 403', async () => {
      const { id } = await createApiKey(t.app, keyMaker.token, { name: 'patched', scopes: ['gps:read'] });
      for (const scope of ['gps:write', 'gps:*', '*:*']) {
        expectForbidden(
          await updateAs(keyMaker.token, id, { scopes: [scope] }),
          `Scope '${scope}' exceeds your own permissions`,
          'role.scope_beyond_caller',
        );
      }
      expect((await t.as(keyMaker.token).get(`/v1/api-keys/${id}`).expect(200)).body.data.scopes).toEqual(['gps:read']);

      const allowed = await updateAs(keyMaker.token, id, { scopes: ['gps:read', 'api_keys:read'] });
      expectResponse(
        allowed,
        200,
        expect.objectContaining({ data: expect.objectContaining({ scopes: ['gps:read', 'api_keys:read'] }) }),
      );
      const byAdmin = await updateAs(admin, id, { scopes: ['*:*'] });
      expectResponse(byAdmin, 200, expect.objectContaining({ data: expect.objectContaining({ scopes: ['*:*'] }) }));
    });

    it('does not let a narrower sibling key regenerate or widen a key with scopes it lacks', async () => {
      const { id } = await createApiKey(t.app, keyMaker.token, { name: 'gps key', scopes: ['gps:read'] });
      const sibling = await createApiKey(t.app, keyMaker.token, {
        name: 'key manager',
        scopes: ['api_keys:read', 'api_keys:write'],
      });
      expectForbidden(
        await t.as(sibling.key).post(`/v1/api-keys/${id}/regenerate`),
        "Scope 'gps:read' exceeds your own permissions",
        'role.scope_beyond_caller',
      );
      expectForbidden(
        await updateAs(sibling.key, id, { name: 'renamed' }),
        "Scope 'gps:read' exceeds your own permissions",
        'role.scope_beyond_caller',
      );
      expectResponse(await t.as(keyMaker.token).post(`/v1/api-keys/${id}/regenerate`), 200);
    });

    it.each(['gps', 'GPS:read'])('rejects the malformed scope %s with 400 on create and on PATCH', async (scope) => {
      const malformed = /^Body field 'scopes\.0' must match pattern/;
      expectBadRequest(await createAs(admin, { name: 'malformed', scopes: [scope] }), malformed, 'request.validation');
      const { id } = await createApiKey(t.app, admin, { name: 'to patch' });
      expectBadRequest(await updateAs(admin, id, { scopes: [scope] }), malformed, 'request.validation');
    });
  });

  describe('is_system and user_id are for super admins', () => {
    it('refuses is_system from a non-super-admin with 403 on create and PATCH', async () => {
      expectForbidden(
        await createAs(keyMaker.token, { name: 'sneaky', is_system: true }),
        'Only super admins may set is_system',
        'api_key.is_system_super_admin_only',
      );
      const { id } = await createApiKey(t.app, keyMaker.token, { name: 'own key' });
      expectForbidden(
        await updateAs(keyMaker.token, id, { is_system: true }),
        'Only super admins may set is_system',
        'api_key.is_system_super_admin_only',
      );
    });

    it('refuses user_id from a non-super-admin with 403 on create and PATCH', async () => {
      expectForbidden(
        await createAs(keyMaker.token, { name: 'for someone', user_id: developer.id }),
        'Only super admins may set user_id',
        'api_key.owner_super_admin_only',
      );
      const { id } = await createApiKey(t.app, keyMaker.token, { name: 'own key' });
      expectForbidden(
        await updateAs(keyMaker.token, id, { user_id: developer.id }),
        'Only super admins may set user_id',
        'api_key.owner_super_admin_only',
      );
    });

    it('refuses the super admin a user_id owner without role_developer with 400', async () => {
      expectBadRequest(
        await createAs(admin, { name: 'for ordinary', user_id: ordinary.id }),
        'The user_id owner must hold role_developer',
        'api_key.owner_not_developer',
      );
      const { id } = await createApiKey(t.app, admin, { name: 'admin key' });
      expectBadRequest(
        await updateAs(admin, id, { user_id: ordinary.id }),
        'The user_id owner must hold role_developer',
        'api_key.owner_not_developer',
      );
    });

    it('gives the key to a developer owner, who then sees it while other key makers do not', async () => {
      const created = await createAs(admin, { name: 'for the developer', user_id: developer.id }).expect(201);
      const { id } = created.body;

      const ownersList = await t.as(developer.token).get('/v1/api-keys').expect(200);
      expect(ownersList.body.data.map((k) => k.id)).toContain(id);
      expect(ownersList.body.data.every((k) => k.user_id === developer.id)).toBe(true);
      expectResponse(
        await t.as(developer.token).get(`/v1/api-keys/${id}`),
        200,
        expect.objectContaining({
          data: expect.objectContaining({ id, user_id: developer.id }),
        }),
      );

      const othersList = await t.as(keyMaker.token).get('/v1/api-keys').expect(200);
      expect(othersList.body.data.map((k) => k.id)).not.toContain(id);
      expect(othersList.body.data.every((k) => k.user_id === keyMaker.id)).toBe(true);
      expectResponse(await t.as(keyMaker.token).get(`/v1/api-keys/${id}`), 404, KEY_NOT_FOUND);
      expectResponse(await updateAs(keyMaker.token, id, { name: 'mine now' }), 404, KEY_NOT_FOUND);
    });
  });

  it('lets a registered user make a key for their phone within their own reach, and see only their own keys', async () => {
    const phone = (await createAs(ordinary.token, { name: 'Phone', scopes: ['gps:write_own'] }).expect(201)).body;
    expect(phone.scopes).toEqual(['gps:write_own']);
    expect((await createAs(ordinary.token, { name: 'Too wide', scopes: ['gps:write'] })).status).toBe(403);
    const listed = (await t.as(ordinary.token).get('/v1/api-keys').expect(200)).body;
    expect(listed.data.map((key) => key.id)).toEqual([phone.id]);
  });

  it('refuses an expires_at in the past with 400', async () => {
    const past = new Date(t.clock.nowMs() - 60_000).toISOString();
    expectBadRequest(
      await createAs(admin, { name: 'already expired', expires_at: past }),
      'expires_at must be in the future',
      'api_key.expiry_in_past',
    );
    const { id } = await createApiKey(t.app, admin, { name: 'to expire' });
    expectBadRequest(
      await updateAs(admin, id, { expires_at: past }),
      'expires_at must be in the future',
      'api_key.expiry_in_past',
    );
  });

  it('writes an api_key_created audit event naming owner and actor', async () => {
    const { id } = (await createAs(admin, { name: 'audited', scopes: ['gps:read'], user_id: developer.id }).expect(201))
      .body;
    const events = await auditEventsFor(t, 'api_key_created', id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      user_id: developer.id,
      actor_id: adminId,
      resource_type: 'api_key',
      status: 'success',
      metadata: { name: 'audited', scopes: ['gps:read'], is_system: false },
    });
  });
});

/** Ways to take a key out of service; each must apply from the very next request. */
const revocations: [string, (app: FastifyInstance, admin: string, id: string) => Promise<RawAnswer>, number][] = [
  ['deleting it', (app, admin, id) => client(app, admin).delete(`/v1/api-keys/${id}`), 204],
  [
    'deactivating it with PATCH is_active false',
    (app, admin, id) => client(app, admin).patch(`/v1/api-keys/${id}`, { is_active: false }),
    200,
  ],
  ['regenerating it', (app, admin, id) => client(app, admin).post(`/v1/api-keys/${id}/regenerate`), 200],
];

describe('expiry, revocation and regeneration', () => {
  let t: TestApp;
  let admin: string;
  let adminId: string;

  beforeAll(async () => {
    t = await buildTestApp();
    admin = await login(t.app, TEST_ADMIN.username, TEST_ADMIN.password);
    adminId = await adminIdOf(t);
  });
  afterAll(() => t.close());

  const roleReader = (name: string, extra: Record<string, unknown> = {}) =>
    createApiKey(t.app, admin, { name, scopes: ['roles:read'], ...extra });

  it('accepts a key until its expires_at, then refuses it with 401', async () => {
    const expiresAt = new Date(t.clock.nowMs() + 60_000).toISOString();
    const { key, expires_at } = await roleReader('short-lived', { expires_at: expiresAt });
    expect(expires_at).toBe(expiresAt);
    expectResponse(await readRoles(t.app, key), 200);
    t.clock.advance(59_000);
    // Cached on this node now: the cache must honour the expiry too.
    expectResponse(await readRoles(t.app, key), 200);
    t.clock.advance(1_001);
    expectResponse(await readRoles(t.app, key), 401, UNAUTHORIZED);
  });

  it.each(revocations)('%s refuses the old key on the very next request', async (_how, revoke, status) => {
    const { id, key } = await roleReader('to revoke');
    expectResponse(await readRoles(t.app, key), 200);
    expect((await revoke(t.app, admin, id)).status).toBe(status);
    expectResponse(await readRoles(t.app, key), 401, UNAUTHORIZED);
  });

  it('regenerates: returns the new key once, the new key works and the old one does not', async () => {
    const { id, key: oldKey } = await roleReader('rotated');
    expectResponse(await readRoles(t.app, oldKey), 200);
    const response = await t.as(admin).post(`/v1/api-keys/${id}/regenerate`).expect(200);
    expectResponse(response, 200, {
      id,
      key: expect.stringMatching(/^wg_[A-Za-z0-9_-]{37,}$/),
      key_prefix: expect.any(String),
      name: 'rotated',
      scopes: ['roles:read'],
      is_active: true,
      expires_at: null,
    });
    const { key: newKey, key_prefix } = response.body;
    expect(newKey).not.toBe(oldKey);
    expect(newKey.startsWith(key_prefix)).toBe(true);
    expectResponse(await readRoles(t.app, oldKey), 401, UNAUTHORIZED);
    expectResponse(await readRoles(t.app, newKey), 200);
    const row = await t.database.db
      .selectFrom('api_keys')
      .select('key_hash')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row.key_hash).toBe(sha256Hex(newKey));
  });

  // One node's cache and spy: on two nodes each node looks the key up once for itself.
  it.skipIf(twoNodes)('looks a key up in the database once for many requests', async () => {
    const { key } = await roleReader('cached');
    const lookup = vi.spyOn(t.app.services.apiKeys, 'lookup');
    try {
      for (let i = 0; i < 5; i++) expectResponse(await readRoles(t.app, key), 200);
      expect(lookup).toHaveBeenCalledTimes(1);
    } finally {
      lookup.mockRestore();
    }
  });

  it('writes an api_key_revoked audit event on delete', async () => {
    const { id } = await roleReader('audited revoke');
    expect((await t.as(admin).delete(`/v1/api-keys/${id}`)).status).toBe(204);
    const events = await auditEventsFor(t, 'api_key_revoked', id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      user_id: adminId,
      actor_id: adminId,
      resource_type: 'api_key',
      status: 'success',
    });
    expectResponse(await t.as(admin).get(`/v1/api-keys/${id}`), 404, KEY_NOT_FOUND);
  });

  describe('across two instances sharing the database and key-value store', () => {
    let other: FastifyInstance;
    beforeAll(async () => {
      other = await buildApp(t.config, { database: t.database, kv: t.kv }, { logger: false });
    });
    afterAll(() => other.close());

    it.each(revocations)(
      '%s on one instance refuses the old key on the next request to the other',
      async (_how, revoke, status) => {
        const { id, key } = await roleReader('shared');
        // Warm the other instance's own cache.
        expectResponse(await readRoles(other, key), 200);
        expectResponse(await readRoles(other, key), 200);
        expect((await revoke(t.app, admin, id)).status).toBe(status);
        expectResponse(await readRoles(other, key), 401, UNAUTHORIZED);
      },
    );

    it('accepts a regenerated key on the other instance at once', async () => {
      const { id, key: oldKey } = await roleReader('rotated shared');
      expectResponse(await readRoles(other, oldKey), 200);
      const { key: newKey } = (await t.as(admin).post(`/v1/api-keys/${id}/regenerate`).expect(200)).body;
      expectResponse(await readRoles(other, oldKey), 401, UNAUTHORIZED);
      expectResponse(await readRoles(other, newKey), 200);
    });
  });
});

describe('system keys', () => {
  let t: TestApp;
  let admin: string;
  let developer: TestUser;
  let bootstrapKeyId: string;

  beforeAll(async () => {
    t = await buildTestApp();
    admin = await login(t.app, TEST_ADMIN.username, TEST_ADMIN.password);
    developer = await createUser(t.app, ['role_developer']);
    const row = await t.database.db
      .selectFrom('api_keys')
      .select('id')
      .where('key_hash', '=', sha256Hex(TEST_SYSTEM_KEY))
      .executeTakeFirstOrThrow();
    bootstrapKeyId = row.id;
  });
  afterAll(() => t.close());

  it('cannot be deleted, not even by the super admin', async () => {
    expectForbidden(
      await t.as(admin).delete(`/v1/api-keys/${bootstrapKeyId}`),
      'System keys cannot be deleted',
      'api_key.system_key_delete',
    );
    expectResponse(
      await t.as(admin).get(`/v1/api-keys/${bootstrapKeyId}`),
      200,
      expect.objectContaining({
        data: expect.objectContaining({ id: bootstrapKeyId, is_system: true, is_active: true }),
      }),
    );
  });

  it('may be regenerated by super admins only, not by the developer who owns it', async () => {
    const created = await t
      .as(admin)
      .post('/v1/api-keys', { name: 'developer system key', is_system: true, user_id: developer.id })
      .expect(201);
    const { id } = created.body;

    expectForbidden(
      await t.as(developer.token).post(`/v1/api-keys/${id}/regenerate`),
      'Only super admins may regenerate system keys',
      'api_key.system_key_super_admin_only',
    );
    expectForbidden(
      await t.as(developer.token).delete(`/v1/api-keys/${id}`),
      'System keys cannot be deleted',
      'api_key.system_key_delete',
    );

    const regenerated = await t.as(admin).post(`/v1/api-keys/${id}/regenerate`);
    expectResponse(
      regenerated,
      200,
      expect.objectContaining({ id, key: expect.stringMatching(/^wg_/), is_active: true }),
    );
  });

  it('is refused on the api-keys routes, which are not on its allowlist', async () => {
    expectForbidden(
      await t.as(TEST_SYSTEM_KEY).get('/v1/api-keys'),
      'System key not permitted on this route',
      'auth.system_key_not_permitted',
    );
    expectForbidden(
      await t.as(TEST_SYSTEM_KEY).post('/v1/api-keys', { name: 'from system' }),
      'System key not permitted on this route',
      'auth.system_key_not_permitted',
    );
  });
});

describe('roles of API keys', () => {
  let t: TestApp;
  let admin: string;
  let keyMaker: TestUser;

  beforeAll(async () => {
    t = await buildTestApp();
    admin = await login(t.app, TEST_ADMIN.username, TEST_ADMIN.password);
    await createRoleWith(t.app, 'Key Makers', KEY_MAKER_PERMISSIONS);
    keyMaker = await createUser(t.app, ['role_key_makers']);
  });
  afterAll(() => t.close());

  const assign = (token: string, id: string, roleId: string) =>
    t.as(token).post(`/v1/api-keys/${id}/roles`, { role_id: roleId });
  const roleIds = (response: RawAnswer) => response.body.data.map((role: { id: string }) => role.id);

  it('lets the super admin assign role_api_read_only, and the key uses it on its very next request', async () => {
    const { id, key } = await createApiKey(t.app, admin, { name: 'role based' });
    expectResponse(await readRoles(t.app, key), 403, forbidden('roles:read'));

    const assigned = await assign(admin, id, 'role_api_read_only').expect(201);
    expectResponse(assigned, 201, {
      data: [
        {
          id: 'role_api_read_only',
          name: 'API Read Only',
          description: expect.any(String),
          is_system: true,
          requires_two_factor: false,
          created_at: expect.any(String),
          updated_at: expect.any(String),
        },
      ],
      _links: { self: expect.stringMatching(new RegExp(`/v1/api-keys/${id}/roles$`)) },
    });
    expectResponse(await readRoles(t.app, key), 200);

    const listed = await t.as(admin).get(`/v1/api-keys/${id}/roles`).expect(200);
    expect(listed.body.data).toEqual(assigned.body.data);
  });

  it('takes the role away with 204, after which the key loses it at once and a second removal is 404', async () => {
    const { id, key } = await createApiKey(t.app, admin, { name: 'role removed' });
    expect((await assign(admin, id, 'role_api_read_only')).status).toBe(201);
    expectResponse(await readRoles(t.app, key), 200);

    expect((await t.as(admin).delete(`/v1/api-keys/${id}/roles/role_api_read_only`)).status).toBe(204);
    expectResponse(await readRoles(t.app, key), 403, forbidden('roles:read'));
    expectResponse(await t.as(admin).delete(`/v1/api-keys/${id}/roles/role_api_read_only`), 404, {
      error: 'NotFound',
      message: 'The API key does not have this role',
      code: 'role.not_on_key',
    });
  });

  it('lets a key maker assign only roles they hold, once', async () => {
    const { id } = await createApiKey(t.app, keyMaker.token, { name: 'key maker key' });
    expectForbidden(
      await assign(keyMaker.token, id, 'role_api_full_access'),
      'You can only assign or remove roles you hold yourself',
      'role.not_held',
    );
    expectForbidden(
      await assign(keyMaker.token, id, 'role_admin'),
      'You can only assign or remove roles you hold yourself',
      'role.not_held',
    );

    const assigned = await assign(keyMaker.token, id, 'role_key_makers');
    expect(assigned.status).toBe(201);
    expect(roleIds(assigned)).toEqual(['role_key_makers']);
    expectResponse(await assign(keyMaker.token, id, 'role_key_makers'), 409, {
      error: 'Conflict',
      message: 'The API key already has this role',
      code: 'role.already_on_key',
    });

    expect((await t.as(keyMaker.token).delete(`/v1/api-keys/${id}/roles/role_key_makers`)).status).toBe(204);
    expect(roleIds(await t.as(keyMaker.token).get(`/v1/api-keys/${id}/roles`))).toEqual([]);
    expect((await t.as(keyMaker.token).delete(`/v1/api-keys/${id}/roles/role_key_makers`)).status).toBe(404);
  });

  it('refuses a key maker role changes on their key once a super admin widened its scopes beyond them (403)', async () => {
    const { id } = await createApiKey(t.app, keyMaker.token, { name: 'widened by admin' });
    expectResponse(await t.as(admin).patch(`/v1/api-keys/${id}`, { scopes: ['gps:*'] }), 200, expect.anything());
    const beyond = "Scope 'gps:*' exceeds your own permissions";
    expectForbidden(await assign(keyMaker.token, id, 'role_key_makers'), beyond, 'role.scope_beyond_caller');
    expectForbidden(
      await t.as(keyMaker.token).delete(`/v1/api-keys/${id}/roles/role_key_makers`),
      beyond,
      'role.scope_beyond_caller',
    );
  });

  it('refuses the super admin a user_id of an unknown user on PATCH with 400', async () => {
    const { id } = await createApiKey(t.app, admin, { name: 'to give away' });
    expectBadRequest(
      await t.as(admin).patch(`/v1/api-keys/${id}`, { user_id: randomUUID() }),
      'user_id does not name an existing user',
      'api_key.unknown_owner',
    );
  });

  it('refuses a key maker the removal of a role they do not hold with 403', async () => {
    const { id, key } = await createApiKey(t.app, keyMaker.token, { name: 'given read only' });
    expect((await assign(admin, id, 'role_api_read_only')).status).toBe(201);
    expectForbidden(
      await t.as(keyMaker.token).delete(`/v1/api-keys/${id}/roles/role_api_read_only`),
      'You can only assign or remove roles you hold yourself',
      'role.not_held',
    );
    expect(roleIds(await t.as(keyMaker.token).get(`/v1/api-keys/${id}/roles`))).toEqual(['role_api_read_only']);
    // The role stays, but the key still cannot exceed its owner, who lacks roles:read.
    expectResponse(await readRoles(t.app, key), 403, forbidden('roles:read'));
  });

  it('limits a key to what its owner may do now', async () => {
    const owner = await createUser(t.app, ['role_key_makers']);
    const { key } = await createApiKey(t.app, owner.token, {
      name: 'owner-bound',
      scopes: ['gps:read', 'api_keys:read'],
    });
    expectResponse(await t.as(key).get('/v1/api-keys'), 200);
    const removed = await t.as(admin).delete(`/v1/users/${owner.id}/roles/role_key_makers`);
    expect(removed.status).toBe(204);
    expectResponse(await t.as(key).get('/v1/api-keys'), 403, forbidden('api_keys:read'));
  });

  it('does not let a device key act on its owner through "or self" routes', async () => {
    const { key } = await createApiKey(t.app, keyMaker.token, { name: 'device', scopes: ['gps:read'] });
    expectResponse(await t.as(key).get(`/v1/users/${keyMaker.id}/permissions`), 403, forbidden('users:read'));
    expectResponse(await t.as(keyMaker.token).get(`/v1/users/${keyMaker.id}/permissions`), 200);
  });

  it('does not let a narrower sibling key delete a wider one', async () => {
    const wide = await createApiKey(t.app, admin, { name: 'wide', scopes: ['gps:read', 'api_keys:read'] });
    const narrow = await createApiKey(t.app, admin, { name: 'narrow', scopes: ['api_keys:read', 'api_keys:delete'] });
    expectForbidden(
      await t.as(narrow.key).delete(`/v1/api-keys/${wide.id}`),
      "Scope 'gps:read' exceeds your own permissions",
      'role.scope_beyond_caller',
    );
    expectResponse(await t.as(admin).get(`/v1/api-keys/${wide.id}`), 200);
  });

  it('does not let a narrower sibling key regenerate, change or delete a key made wider by a role', async () => {
    const owner = await createUser(t.app, ['role_key_makers', 'role_developer']);
    const wide = await createApiKey(t.app, owner.token, { name: 'wide by role' });
    expect((await assign(owner.token, wide.id, 'role_key_makers')).status).toBe(201);
    expectResponse(await t.as(wide.key).get('/v1/gps'), 200);
    const narrow = await createApiKey(t.app, owner.token, {
      name: 'narrow',
      scopes: ['api_keys:read', 'api_keys:write', 'api_keys:delete'],
    });
    const beyond = "Scope 'gps:read' exceeds your own permissions";
    expectForbidden(
      await t.as(narrow.key).post(`/v1/api-keys/${wide.id}/regenerate`),
      beyond,
      'role.scope_beyond_caller',
    );
    expectForbidden(
      await t.as(narrow.key).patch(`/v1/api-keys/${wide.id}`, { name: 'renamed' }),
      beyond,
      'role.scope_beyond_caller',
    );
    expectForbidden(await t.as(narrow.key).delete(`/v1/api-keys/${wide.id}`), beyond, 'role.scope_beyond_caller');
    // The wide key still works with its value; its owner may still manage it.
    expectResponse(await t.as(wide.key).get('/v1/gps'), 200);
    expectResponse(await t.as(owner.token).post(`/v1/api-keys/${wide.id}/regenerate`), 200);
  });

  it("hides another owner's key roles behind 404 and answers 404 for an unknown role", async () => {
    const { id } = await createApiKey(t.app, admin, { name: 'admin only' });
    expectResponse(await t.as(keyMaker.token).get(`/v1/api-keys/${id}/roles`), 404, KEY_NOT_FOUND);
    expectResponse(await assign(keyMaker.token, id, 'role_key_makers'), 404, KEY_NOT_FOUND);
    expectResponse(await assign(admin, id, 'role_does_not_exist'), 404, {
      error: 'NotFound',
      message: 'Role not found',
      code: 'role.not_found',
    });
  });
});

describe('api-keys route guards', () => {
  let t: TestApp;
  let admin: string;

  beforeAll(async () => {
    t = await buildTestApp();
    admin = await login(t.app, TEST_ADMIN.username, TEST_ADMIN.password);
  });
  afterAll(() => t.close());

  /** Every api-keys route with a well-formed body, for a key id. */
  const routes = (id: string): RouteCall[] => [
    ['GET', '/v1/api-keys'],
    ['POST', '/v1/api-keys', { name: 'guarded' }],
    ['GET', `/v1/api-keys/${id}`],
    ['PATCH', `/v1/api-keys/${id}`, { name: 'renamed' }],
    ['POST', `/v1/api-keys/${id}/regenerate`],
    ['DELETE', `/v1/api-keys/${id}`],
    ['GET', `/v1/api-keys/${id}/roles`],
    ['POST', `/v1/api-keys/${id}/roles`, { role_id: 'role_api_read_only' }],
    ['DELETE', `/v1/api-keys/${id}/roles/role_api_read_only`],
  ];
  const routesOnAKey = (id: string) => routes(id).filter(([, url]) => url.startsWith(`/v1/api-keys/${id}`));

  /** Sends each request as `token` and expects the same status and body from all of them. */
  async function expectEveryRoute(requests: RouteCall[], token: string | undefined, status: number, body: unknown) {
    for (const [method, url, payload] of requests) {
      const response = await t.as(token).raw({ method, url, payload });
      expect({ method, url, status: response.status, body: response.body }).toEqual({
        method,
        url,
        status,
        body,
      });
    }
  }

  it('answers 401 without credentials on every route', async () => {
    const { id } = await createApiKey(t.app, admin, { name: 'guarded' });
    await expectEveryRoute(routes(id), undefined, 401, UNAUTHORIZED);
  });

  it('answers 401 without credentials before looking at malformed ids or bodies', async () => {
    const malformed = routes('not-a-uuid').map(([method, url]): RouteCall => [
      method,
      url,
      method === 'GET' ? undefined : { unexpected: true },
    ]);
    await expectEveryRoute(malformed, undefined, 401, UNAUTHORIZED);
  });

  it('answers 401 for an unknown bearer token on every route', async () => {
    const { id } = await createApiKey(t.app, admin, { name: 'guarded' });
    await expectEveryRoute(routes(id), 'wg_not_a_real_key_0123456789abcdefghijklmn', 401, UNAUTHORIZED);
  });

  it('answers 403 on every route to a user without api_keys permissions', async () => {
    const user = await createUser(t.app, []);
    const { id } = await createApiKey(t.app, admin, { name: 'guarded' });
    for (const [method, url, payload] of routes(id)) {
      const permission =
        method === 'GET'
          ? 'api_keys:read'
          : method === 'DELETE' && !url.includes('/roles/')
            ? 'api_keys:delete'
            : 'api_keys:write';
      await expectEveryRoute([[method, url, payload]], user.token, 403, forbidden(permission));
    }
  });

  it('answers 404 for an unknown key id on every route that takes one', async () => {
    await expectEveryRoute(routesOnAKey(randomUUID()), admin, 404, KEY_NOT_FOUND);
  });

  it('answers 400 for a key id that is not a UUID on every route that takes one', async () => {
    await expectEveryRoute(routesOnAKey('not-a-uuid'), admin, 400, {
      error: 'BadRequest',
      message: `Path parameter 'id' must match format "uuid"`,
      code: 'request.validation',
    });
  });

  it('ignores X-User-Id: a key naming the super admin in it gains nothing', async () => {
    const { key } = await createApiKey(t.app, admin, { name: 'impersonator', scopes: ['roles:read'] });
    const adminId = await adminIdOf(t);
    const asAdmin = { 'x-user-id': adminId };
    expectResponse(
      await t.as(key).post('/v1/roles', { name: 'Escalated' }, { headers: asAdmin }),
      403,
      forbidden('roles:write'),
    );
    expectResponse(await t.as(key).get('/v1/api-keys', { headers: asAdmin }), 403, forbidden('api_keys:read'));
    expectResponse(
      await t.as(key).post('/v1/api-keys', { name: 'escalated', scopes: ['*:*'] }, { headers: asAdmin }),
      403,
      forbidden('api_keys:write'),
    );
  });
});
