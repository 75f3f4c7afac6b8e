import { createHash, randomUUID } from 'node:crypto';
import type { FastifyInstance, LightMyRequestResponse as Response } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  adminIdOf,
  bearer,
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

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
/** A request: method, URL and optional JSON body. */
type RouteCall = [Method, string, object?];

const KEY_NOT_FOUND = { error: 'NotFound', message: 'API key not found', code: 'api_key.not_found' };

/** One HTTP request, optionally as `token`. */
function call(
  app: FastifyInstance,
  method: Method,
  url: string,
  token?: string,
  payload?: object,
  headers: Record<string, string> = {},
) {
  return app.inject({ method, url, payload, headers: { ...(token ? bearer(token) : {}), ...headers } });
}

function expectResponse(response: Response, status: number, body?: unknown) {
  expect({ status: response.statusCode, body: body === undefined ? undefined : response.json() }).toEqual({
    status,
    body,
  });
}

const expectForbidden = (response: Response, message: string, code: string) =>
  expectResponse(response, 403, { error: 'Forbidden', message, code });
const expectBadRequest = (response: Response, message: string | RegExp, code: string) =>
  expectResponse(response, 400, {
    error: 'BadRequest',
    message: typeof message === 'string' ? message : expect.stringMatching(message),
    code,
  });

/** A probe for what a credential may do: GET /v1/roles needs roles:read. */
const readRoles = (app: FastifyInstance, token: string) => call(app, 'GET', '/v1/roles', token);

const sha256Hex = (value: string) => createHash('sha256').update(value).digest('hex');
const keyUrl = (id: string, suffix = '') => `/v1/api-keys/${id}${suffix}`;

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

  const createAs = (token: string, body: Record<string, unknown>) => call(t.app, 'POST', '/v1/api-keys', token, body);
  const updateAs = (token: string, id: string, body: Record<string, unknown>) =>
    call(t.app, 'PATCH', keyUrl(id), token, body);

  it('answers 201 with exactly id, a wg_ key of at least 40 characters, name, scopes and expires_at', async () => {
    const response = await createAs(admin, { name: 'ci pipeline', description: 'for CI', scopes: ['roles:read'] });
    expectResponse(response, 201, {
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      key: expect.stringMatching(/^wg_[A-Za-z0-9_-]{37,}$/),
      name: 'ci pipeline',
      scopes: ['roles:read'],
      expires_at: null,
    });
    expect(response.json().key.length).toBeGreaterThanOrEqual(40);
  });

  it('says what a key created without scopes can do, and the 403 it then meets names the missing permission', async () => {
    const response = await createAs(admin, { name: 'no scopes yet' });
    expectResponse(response, 201, {
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      key: expect.stringMatching(/^wg_/),
      name: 'no scopes yet',
      scopes: [],
      expires_at: null,
      message: NO_SCOPES_MESSAGE,
    });
    const { key } = response.json();
    expectResponse(await call(t.app, 'GET', '/v1/users/me', key), 200, expect.anything());
    expectResponse(await call(t.app, 'GET', '/v1/gps', key), 403, forbidden('gps:read'));
    // A system key holds every permission: nothing to warn about.
    expect((await createAs(admin, { name: 'system, no scopes', is_system: true })).json()).not.toHaveProperty(
      'message',
    );
  });

  it('never shows the key again: list and get carry only key_prefix, a prefix of the key', async () => {
    const { id, key } = await createApiKey(t.app, admin, { name: 'shown once', scopes: ['roles:read'] });

    const got = await call(t.app, 'GET', keyUrl(id), admin);
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
    const prefix: string = got.json().data.key_prefix;
    expect(key.startsWith(prefix) && prefix.length < key.length).toBe(true);

    const list = await call(t.app, 'GET', '/v1/api-keys', admin);
    expect(list.statusCode).toBe(200);
    const listed = list.json().data.find((k: { id: string }) => k.id === id);
    expect(listed).toEqual(got.json().data);
    for (const body of [got.body, list.body]) {
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
    expectResponse(await call(t.app, 'POST', '/v1/roles', key, { name: 'Made By Key' }), 403, forbidden('roles:write'));
    expectResponse(await call(t.app, 'GET', '/v1/api-keys', key), 403, forbidden('api_keys:read'));
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
      expect((await call(t.app, 'GET', keyUrl(id), keyMaker.token)).json().data.scopes).toEqual(['gps:read']);

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
        await call(t.app, 'POST', keyUrl(id, '/regenerate'), sibling.key),
        "Scope 'gps:read' exceeds your own permissions",
        'role.scope_beyond_caller',
      );
      expectForbidden(
        await updateAs(sibling.key, id, { name: 'renamed' }),
        "Scope 'gps:read' exceeds your own permissions",
        'role.scope_beyond_caller',
      );
      expectResponse(await call(t.app, 'POST', keyUrl(id, '/regenerate'), keyMaker.token), 200);
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
      const created = await createAs(admin, { name: 'for the developer', user_id: developer.id });
      expect(created.statusCode).toBe(201);
      const { id } = created.json();

      const ownersList = await call(t.app, 'GET', '/v1/api-keys', developer.token);
      expect(ownersList.statusCode).toBe(200);
      expect(ownersList.json().data.map((k: { id: string }) => k.id)).toContain(id);
      expect(ownersList.json().data.every((k: { user_id: string }) => k.user_id === developer.id)).toBe(true);
      expectResponse(
        await call(t.app, 'GET', keyUrl(id), developer.token),
        200,
        expect.objectContaining({
          data: expect.objectContaining({ id, user_id: developer.id }),
        }),
      );

      const othersList = await call(t.app, 'GET', '/v1/api-keys', keyMaker.token);
      expect(othersList.statusCode).toBe(200);
      expect(othersList.json().data.map((k: { id: string }) => k.id)).not.toContain(id);
      expect(othersList.json().data.every((k: { user_id: string }) => k.user_id === keyMaker.id)).toBe(true);
      expectResponse(await call(t.app, 'GET', keyUrl(id), keyMaker.token), 404, KEY_NOT_FOUND);
      expectResponse(await updateAs(keyMaker.token, id, { name: 'mine now' }), 404, KEY_NOT_FOUND);
    });
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
    const { id } = (await createAs(admin, { name: 'audited', scopes: ['gps:read'], user_id: developer.id })).json();
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
const revocations: [string, (app: FastifyInstance, admin: string, id: string) => Promise<Response>, number][] = [
  ['deleting it', (app, admin, id) => call(app, 'DELETE', keyUrl(id), admin), 204],
  [
    'deactivating it with PATCH is_active false',
    (app, admin, id) => call(app, 'PATCH', keyUrl(id), admin, { is_active: false }),
    200,
  ],
  ['regenerating it', (app, admin, id) => call(app, 'POST', keyUrl(id, '/regenerate'), admin), 200],
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
    expect((await revoke(t.app, admin, id)).statusCode).toBe(status);
    expectResponse(await readRoles(t.app, key), 401, UNAUTHORIZED);
  });

  it('regenerates: returns the new key once, the new key works and the old one does not', async () => {
    const { id, key: oldKey } = await roleReader('rotated');
    expectResponse(await readRoles(t.app, oldKey), 200);
    const response = await call(t.app, 'POST', keyUrl(id, '/regenerate'), admin);
    expectResponse(response, 200, {
      id,
      key: expect.stringMatching(/^wg_[A-Za-z0-9_-]{37,}$/),
      key_prefix: expect.any(String),
      name: 'rotated',
      scopes: ['roles:read'],
      is_active: true,
      expires_at: null,
    });
    const { key: newKey, key_prefix } = response.json();
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
    expect((await call(t.app, 'DELETE', keyUrl(id), admin)).statusCode).toBe(204);
    const events = await auditEventsFor(t, 'api_key_revoked', id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      user_id: adminId,
      actor_id: adminId,
      resource_type: 'api_key',
      status: 'success',
    });
    expectResponse(await call(t.app, 'GET', keyUrl(id), admin), 404, KEY_NOT_FOUND);
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
        expect((await revoke(t.app, admin, id)).statusCode).toBe(status);
        expectResponse(await readRoles(other, key), 401, UNAUTHORIZED);
      },
    );

    it('accepts a regenerated key on the other instance at once', async () => {
      const { id, key: oldKey } = await roleReader('rotated shared');
      expectResponse(await readRoles(other, oldKey), 200);
      const { key: newKey } = (await call(t.app, 'POST', keyUrl(id, '/regenerate'), admin)).json();
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
      await call(t.app, 'DELETE', keyUrl(bootstrapKeyId), admin),
      'System keys cannot be deleted',
      'api_key.system_key_delete',
    );
    expectResponse(
      await call(t.app, 'GET', keyUrl(bootstrapKeyId), admin),
      200,
      expect.objectContaining({
        data: expect.objectContaining({ id: bootstrapKeyId, is_system: true, is_active: true }),
      }),
    );
  });

  it('may be regenerated by super admins only, not by the developer who owns it', async () => {
    const created = await call(t.app, 'POST', '/v1/api-keys', admin, {
      name: 'developer system key',
      is_system: true,
      user_id: developer.id,
    });
    expect(created.statusCode).toBe(201);
    const { id } = created.json();

    expectForbidden(
      await call(t.app, 'POST', keyUrl(id, '/regenerate'), developer.token),
      'Only super admins may regenerate system keys',
      'api_key.system_key_super_admin_only',
    );
    expectForbidden(
      await call(t.app, 'DELETE', keyUrl(id), developer.token),
      'System keys cannot be deleted',
      'api_key.system_key_delete',
    );

    const regenerated = await call(t.app, 'POST', keyUrl(id, '/regenerate'), admin);
    expectResponse(
      regenerated,
      200,
      expect.objectContaining({ id, key: expect.stringMatching(/^wg_/), is_active: true }),
    );
  });

  it('is refused on the api-keys routes, which are not on its allowlist', async () => {
    expectForbidden(
      await call(t.app, 'GET', '/v1/api-keys', TEST_SYSTEM_KEY),
      'System key not permitted on this route',
      'auth.system_key_not_permitted',
    );
    expectForbidden(
      await call(t.app, 'POST', '/v1/api-keys', TEST_SYSTEM_KEY, { name: 'from system' }),
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

  const rolesUrl = (id: string, roleId = '') => keyUrl(id, `/roles${roleId ? `/${roleId}` : ''}`);
  const assign = (token: string, id: string, roleId: string) =>
    call(t.app, 'POST', rolesUrl(id), token, { role_id: roleId });
  const roleIds = (response: Response) => response.json().data.map((role: { id: string }) => role.id);

  it('lets the super admin assign role_api_read_only, and the key uses it on its very next request', async () => {
    const { id, key } = await createApiKey(t.app, admin, { name: 'role based' });
    expectResponse(await readRoles(t.app, key), 403, forbidden('roles:read'));

    const assigned = await assign(admin, id, 'role_api_read_only');
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

    const listed = await call(t.app, 'GET', rolesUrl(id), admin);
    expect(listed.statusCode).toBe(200);
    expect(listed.json().data).toEqual(assigned.json().data);
  });

  it('takes the role away with 204, after which the key loses it at once and a second removal is 404', async () => {
    const { id, key } = await createApiKey(t.app, admin, { name: 'role removed' });
    expect((await assign(admin, id, 'role_api_read_only')).statusCode).toBe(201);
    expectResponse(await readRoles(t.app, key), 200);

    expect((await call(t.app, 'DELETE', rolesUrl(id, 'role_api_read_only'), admin)).statusCode).toBe(204);
    expectResponse(await readRoles(t.app, key), 403, forbidden('roles:read'));
    expectResponse(await call(t.app, 'DELETE', rolesUrl(id, 'role_api_read_only'), admin), 404, {
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
    expect(assigned.statusCode).toBe(201);
    expect(roleIds(assigned)).toEqual(['role_key_makers']);
    expectResponse(await assign(keyMaker.token, id, 'role_key_makers'), 409, {
      error: 'Conflict',
      message: 'The API key already has this role',
      code: 'role.already_on_key',
    });

    expect((await call(t.app, 'DELETE', rolesUrl(id, 'role_key_makers'), keyMaker.token)).statusCode).toBe(204);
    expect(roleIds(await call(t.app, 'GET', rolesUrl(id), keyMaker.token))).toEqual([]);
    expect((await call(t.app, 'DELETE', rolesUrl(id, 'role_key_makers'), keyMaker.token)).statusCode).toBe(404);
  });

  it('refuses a key maker role changes on their key once a super admin widened its scopes beyond them (403)', async () => {
    const { id } = await createApiKey(t.app, keyMaker.token, { name: 'widened by admin' });
    expectResponse(await call(t.app, 'PATCH', keyUrl(id), admin, { scopes: ['gps:*'] }), 200, expect.anything());
    const beyond = "Scope 'gps:*' exceeds your own permissions";
    expectForbidden(await assign(keyMaker.token, id, 'role_key_makers'), beyond, 'role.scope_beyond_caller');
    expectForbidden(
      await call(t.app, 'DELETE', rolesUrl(id, 'role_key_makers'), keyMaker.token),
      beyond,
      'role.scope_beyond_caller',
    );
  });

  it('refuses the super admin a user_id of an unknown user on PATCH with 400', async () => {
    const { id } = await createApiKey(t.app, admin, { name: 'to give away' });
    expectBadRequest(
      await call(t.app, 'PATCH', keyUrl(id), admin, { user_id: randomUUID() }),
      'user_id does not name an existing user',
      'api_key.unknown_owner',
    );
  });

  it('refuses a key maker the removal of a role they do not hold with 403', async () => {
    const { id, key } = await createApiKey(t.app, keyMaker.token, { name: 'given read only' });
    expect((await assign(admin, id, 'role_api_read_only')).statusCode).toBe(201);
    expectForbidden(
      await call(t.app, 'DELETE', rolesUrl(id, 'role_api_read_only'), keyMaker.token),
      'You can only assign or remove roles you hold yourself',
      'role.not_held',
    );
    expect(roleIds(await call(t.app, 'GET', rolesUrl(id), keyMaker.token))).toEqual(['role_api_read_only']);
    // The role stays, but the key still cannot exceed its owner, who lacks roles:read.
    expectResponse(await readRoles(t.app, key), 403, forbidden('roles:read'));
  });

  it('limits a key to what its owner may do now', async () => {
    const owner = await createUser(t.app, ['role_key_makers']);
    const { key } = await createApiKey(t.app, owner.token, {
      name: 'owner-bound',
      scopes: ['gps:read', 'api_keys:read'],
    });
    expectResponse(await call(t.app, 'GET', '/v1/api-keys', key), 200);
    const removed = await call(t.app, 'DELETE', `/v1/users/${owner.id}/roles/role_key_makers`, admin);
    expect(removed.statusCode).toBe(204);
    expectResponse(await call(t.app, 'GET', '/v1/api-keys', key), 403, forbidden('api_keys:read'));
  });

  it('does not let a device key act on its owner through "or self" routes', async () => {
    const { key } = await createApiKey(t.app, keyMaker.token, { name: 'device', scopes: ['gps:read'] });
    expectResponse(await call(t.app, 'GET', `/v1/users/${keyMaker.id}/permissions`, key), 403, forbidden('users:read'));
    expectResponse(await call(t.app, 'GET', `/v1/users/${keyMaker.id}/permissions`, keyMaker.token), 200);
  });

  it('does not let a narrower sibling key delete a wider one', async () => {
    const wide = await createApiKey(t.app, admin, { name: 'wide', scopes: ['gps:read', 'api_keys:read'] });
    const narrow = await createApiKey(t.app, admin, { name: 'narrow', scopes: ['api_keys:read', 'api_keys:delete'] });
    expectForbidden(
      await call(t.app, 'DELETE', keyUrl(wide.id), narrow.key),
      "Scope 'gps:read' exceeds your own permissions",
      'role.scope_beyond_caller',
    );
    expectResponse(await call(t.app, 'GET', keyUrl(wide.id), admin), 200);
  });

  it('does not let a narrower sibling key regenerate, change or delete a key made wider by a role', async () => {
    const owner = await createUser(t.app, ['role_key_makers', 'role_developer']);
    const wide = await createApiKey(t.app, owner.token, { name: 'wide by role' });
    expect((await assign(owner.token, wide.id, 'role_key_makers')).statusCode).toBe(201);
    expectResponse(await call(t.app, 'GET', '/v1/gps', wide.key), 200);
    const narrow = await createApiKey(t.app, owner.token, {
      name: 'narrow',
      scopes: ['api_keys:read', 'api_keys:write', 'api_keys:delete'],
    });
    const beyond = "Scope 'gps:read' exceeds your own permissions";
    expectForbidden(
      await call(t.app, 'POST', keyUrl(wide.id, '/regenerate'), narrow.key),
      beyond,
      'role.scope_beyond_caller',
    );
    expectForbidden(
      await call(t.app, 'PATCH', keyUrl(wide.id), narrow.key, { name: 'renamed' }),
      beyond,
      'role.scope_beyond_caller',
    );
    expectForbidden(await call(t.app, 'DELETE', keyUrl(wide.id), narrow.key), beyond, 'role.scope_beyond_caller');
    // The wide key still works with its value; its owner may still manage it.
    expectResponse(await call(t.app, 'GET', '/v1/gps', wide.key), 200);
    expectResponse(await call(t.app, 'POST', keyUrl(wide.id, '/regenerate'), owner.token), 200);
  });

  it("hides another owner's key roles behind 404 and answers 404 for an unknown role", async () => {
    const { id } = await createApiKey(t.app, admin, { name: 'admin only' });
    expectResponse(await call(t.app, 'GET', rolesUrl(id), keyMaker.token), 404, KEY_NOT_FOUND);
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
    ['GET', keyUrl(id)],
    ['PATCH', keyUrl(id), { name: 'renamed' }],
    ['POST', keyUrl(id, '/regenerate')],
    ['DELETE', keyUrl(id)],
    ['GET', keyUrl(id, '/roles')],
    ['POST', keyUrl(id, '/roles'), { role_id: 'role_api_read_only' }],
    ['DELETE', keyUrl(id, '/roles/role_api_read_only')],
  ];
  const routesOnAKey = (id: string) => routes(id).filter(([, url]) => url.startsWith(keyUrl(id)));

  /** Sends each request as `token` and expects the same status and body from all of them. */
  async function expectEveryRoute(requests: RouteCall[], token: string | undefined, status: number, body: unknown) {
    for (const [method, url, payload] of requests) {
      const response = await call(t.app, method, url, token, payload);
      expect({ method, url, status: response.statusCode, body: response.json() }).toEqual({
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
    const user = await createUser(t.app);
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
      await call(t.app, 'POST', '/v1/roles', key, { name: 'Escalated' }, asAdmin),
      403,
      forbidden('roles:write'),
    );
    expectResponse(await call(t.app, 'GET', '/v1/api-keys', key, undefined, asAdmin), 403, forbidden('api_keys:read'));
    expectResponse(
      await call(t.app, 'POST', '/v1/api-keys', key, { name: 'escalated', scopes: ['*:*'] }, asAdmin),
      403,
      forbidden('api_keys:write'),
    );
  });
});
