import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { client, unchecked } from '../../../test/client.js';
import {
  buildTestApp,
  createApiKey,
  createRoleWith,
  createUser,
  login,
  TEST_ADMIN,
  type TestApp,
} from '../../../test/helpers.js';

const HOST = 'waygate.test';
const UNKNOWN_UUID = '00000000-0000-4000-8000-000000000000';
const ISO_DATE = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
const UUID = expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);

const BUILT_IN_ROLES = [
  { id: 'role_admin', name: 'Admin', description: 'Super administrator: may do everything' },
  {
    id: 'role_api_full_access',
    name: 'API Full Access',
    description: 'Create, update and delete all tracking resources',
  },
  { id: 'role_api_read_only', name: 'API Read Only', description: 'View GPS and tracking data, users and roles' },
  { id: 'role_developer', name: 'Developer', description: 'May own API keys and OAuth clients' },
  { id: 'role_user', name: 'User', description: 'Default role of registered users' },
];
const summaryOf = (id: string) => BUILT_IN_ROLES.find((role) => role.id === id)!;

const READ_ONLY_PERMISSIONS = [
  'devices:read',
  'events:read',
  'geofences:read',
  'gps:read',
  'locations:read',
  'pegel:read',
  'roles:read',
  'trip_categories:read',
  'trips:read',
  'users:read',
];

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** Every request names this host: the answers' `_links` are checked against it. */
const host = { headers: { host: HOST } };

const ERROR_NAMES: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  409: 'Conflict',
};

/** The code each message of these tests comes with; a message given as a pattern is a validation message. */
const CODES: Record<string, string> = {
  'Invalid or missing authentication token': 'auth.unauthorized',
  'Role not found': 'role.not_found',
  'A role with this name already exists': 'role.name_taken',
  "Body field 'name' is required": 'request.validation',
  "Body field 'permission_id' is required": 'request.validation',
  'name must contain letters or digits': 'role.invalid_name',
  'System roles cannot be renamed': 'role.system_rename',
  'System roles cannot be deleted': 'role.system_delete',
  'The role already has this permission': 'role.permission_already_granted',
  'Permission not found': 'permission.not_found',
  'The role does not have this permission': 'role.permission_not_granted',
  'You can only grant permissions you hold yourself': 'permission.grant_not_held',
  'You can only revoke permissions you hold yourself': 'permission.revoke_not_held',
  'Only super admins may change a super-admin role': 'role.super_admin_role',
  "Permission 'gps:read' already exists": 'permission.exists',
  'You can only assign or remove roles you hold yourself': 'role.not_held',
  'User not found': 'user.not_found',
  'The user already has this role': 'role.already_assigned',
  'The user does not have this role': 'role.not_assigned',
  'The last super admin cannot lose that role': 'user.last_super_admin_role',
  "The role holds 'users:delete', which you do not hold": 'role.permission_not_held',
};

/** Asserts status and the `{ error, message, code }` body together, so a failure shows all. */
function expectError(response: Answered, status: number, message: string | RegExp) {
  const code =
    typeof message === 'string'
      ? (CODES[message] ??
        (message.startsWith(FORBIDDEN_PREFIX) ? 'auth.forbidden' : `(no code listed for: ${message})`))
      : 'request.validation';
  expect({ status: response.status, body: response.body }).toEqual({
    status,
    body: {
      error: ERROR_NAMES[status],
      message: typeof message === 'string' ? message : expect.stringMatching(message),
      code,
    },
  });
}

function expectStatus(response: Answered, status: number) {
  expect(response.status, response.text).toBe(status);
}

/** What the assertions above read of an answer. */
type Answered = { status: number; body: unknown; text: string };

const UNAUTHORIZED = 'Invalid or missing authentication token';
const FORBIDDEN_PREFIX = 'Insufficient permissions for this operation: requires ';
const forbidden = (permission: string) => FORBIDDEN_PREFIX + permission;

/** Signs the bootstrap super admin in; returns its user id and session token. */
async function signInAdmin(app: FastifyInstance) {
  const response = await client(app)
    .post('/v1/auth/login', { identifier: TEST_ADMIN.username, password: TEST_ADMIN.password })
    .expect(200);
  const body = response.body;
  return { id: body.user_id as string, token: body.session_token as string };
}

/** `resource:action` -> permission id, read over HTTP as the admin. */
async function permissionIds(app: FastifyInstance, adminToken: string): Promise<Map<string, string>> {
  const response = await client(app, adminToken).get('/v1/permissions', host).expect(200);
  const permissions = response.body.data as { id: string; resource: string; action: string }[];
  return new Map(permissions.map((p) => [`${p.resource}:${p.action}`, p.id]));
}

const names = (permissions: { resource: string; action: string }[]) =>
  permissions.map((p) => `${p.resource}:${p.action}`);

describe('authentication and authorisation of the access endpoints', () => {
  let t: TestApp;
  let plainUser: Awaited<ReturnType<typeof createUser>>;
  beforeAll(async () => {
    t = await buildTestApp();
    plainUser = await createUser(t.app, ['role_user']);
  });
  afterAll(() => t.close());

  // Each request is valid apart from its credentials; user ids are not the caller's own.
  const endpoints: [Method, string, string, object?][] = [
    ['GET', '/v1/roles', 'roles:read'],
    ['GET', '/v1/roles/role_user', 'roles:read'],
    ['POST', '/v1/roles', 'roles:write', { name: 'Intruders' }],
    ['PATCH', '/v1/roles/role_user', 'roles:write', { description: 'changed' }],
    ['DELETE', '/v1/roles/role_developer', 'roles:delete'],
    ['GET', '/v1/roles/role_user/permissions', 'roles:read'],
    ['POST', '/v1/roles/role_user/permissions', 'roles:write', { permission_id: UNKNOWN_UUID }],
    ['DELETE', `/v1/roles/role_developer/permissions/${UNKNOWN_UUID}`, 'roles:write'],
    ['GET', '/v1/permissions', 'permissions:read'],
    ['GET', `/v1/permissions/${UNKNOWN_UUID}`, 'permissions:read'],
    ['POST', '/v1/permissions', 'permissions:write', { resource: 'intrusion', action: 'read' }],
    ['GET', `/v1/users/${UNKNOWN_UUID}/permissions`, 'users:read'],
    ['GET', `/v1/users/${UNKNOWN_UUID}/roles`, 'users:read'],
    ['POST', `/v1/users/${UNKNOWN_UUID}/roles`, 'users:write', { role_id: 'role_admin' }],
    ['DELETE', `/v1/users/${UNKNOWN_UUID}/roles/role_user`, 'users:write'],
  ];

  it.each(endpoints)('%s %s without credentials is 401', async (method, url, _permission, payload) => {
    expectError(await client(t.app).raw({ method, url, payload, ...host }), 401, UNAUTHORIZED);
  });

  it.each(endpoints)('%s %s with a garbage bearer token is 401', async (method, url, _permission, payload) => {
    expectError(await client(t.app, 'not-a-real-token').raw({ method, url, payload, ...host }), 401, UNAUTHORIZED);
  });

  it.each(endpoints)(
    '%s %s by a signed-in user without the permission is 403',
    async (method, url, permission, payload) => {
      expectError(
        await client(t.app, plainUser.token).raw({ method, url, payload, ...host }),
        403,
        forbidden(permission),
      );
    },
  );

  it('rejects a non-Bearer Authorization header with 401', async () => {
    const response = await client(t.app).get('/v1/roles', { headers: { authorization: `Basic ${plainUser.token}` } });
    expectError(response, 401, UNAUTHORIZED);
  });

  it('answers an anonymous request with an invalid body or path 401, not a validation error', async () => {
    expectError(await client(t.app).post('/v1/roles', unchecked({}), host), 401, UNAUTHORIZED);
    expectError(await client(t.app).get('/v1/roles/not-a-role-id', host), 401, UNAUTHORIZED);
  });

  it('answers a caller lacking the permission 403 even when the body is invalid', async () => {
    expectError(
      await client(t.app, plainUser.token).post('/v1/permissions', unchecked({ resource: 'Bad Resource' }), host),
      403,
      forbidden('permissions:write'),
    );
  });
});

describe('roles', () => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    t = await buildTestApp();
    admin = (await signInAdmin(t.app)).token;
  });
  afterAll(() => t.close());

  const getRole = (id: string) => client(t.app, admin).get(`/v1/roles/${id}`, host);
  const createRole = (body: object) => client(t.app, admin).post('/v1/roles', unchecked(body), host);
  const patchRole = (id: string, body: object) => client(t.app, admin).patch(`/v1/roles/${id}`, unchecked(body), host);

  const customRole = (fields: {
    id: string;
    name: string;
    description?: string | null;
    requires_two_factor?: boolean;
  }) => ({
    description: null,
    requires_two_factor: false,
    ...fields,
    is_system: false,
    created_at: ISO_DATE,
    updated_at: ISO_DATE,
  });

  it('lists the five built-in system roles in a { data, _links } envelope without is_super_admin', async () => {
    const response = await client(t.app, admin).get('/v1/roles', host).expect(200);
    const body = response.body;
    expect(body._links).toEqual({ self: `http://${HOST}/v1/roles` });
    // Other tests of this app add roles of their own; the built-in ones are the system roles.
    const roles = body.data
      .filter((role: { is_system: boolean }) => role.is_system)
      .sort((a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id));
    expect(roles).toEqual(
      BUILT_IN_ROLES.map((role) => ({
        ...role,
        is_system: true,
        requires_two_factor: false,
        created_at: ISO_DATE,
        updated_at: ISO_DATE,
      })),
    );
    for (const role of roles) expect(role).not.toHaveProperty('is_super_admin');
  });

  it('gets one role by id', async () => {
    const response = await getRole('role_admin').expect(200);
    expect(response.body).toEqual({
      data: {
        ...summaryOf('role_admin'),
        is_system: true,
        requires_two_factor: false,
        created_at: ISO_DATE,
        updated_at: ISO_DATE,
      },
      _links: { self: `http://${HOST}/v1/roles/role_admin` },
    });
  });

  it('answers 404 for an unknown role and 400 for an id that is not role_...', async () => {
    expectError(await getRole('role_nonexistent'), 404, 'Role not found');
    expectError(await getRole('admin'), 400, /^Path parameter 'id' must match pattern/);
    expectError(await getRole('role_UPPER'), 400, /^Path parameter 'id' must match pattern/);
  });

  it('creates a role whose id is derived from its name', async () => {
    const response = await createRole({
      name: 'Fleet Managers',
      description: 'Dispatch the fleet',
      requires_two_factor: true,
    }).expect(201);
    const expected = customRole({
      id: 'role_fleet_managers',
      name: 'Fleet Managers',
      description: 'Dispatch the fleet',
      requires_two_factor: true,
    });
    expect(response.body).toEqual({
      data: expected,
      _links: { self: `http://${HOST}/v1/roles/role_fleet_managers` },
    });
    expect(response.headers.location).toBe(`http://${HOST}/v1/roles/role_fleet_managers`);
    expect((await getRole('role_fleet_managers').expect(200)).body.data).toEqual(expected);
  });

  it('defaults description to null and requires_two_factor to false', async () => {
    const response = await createRole({ name: 'Night Shift 2' }).expect(201);
    expect(response.body.data).toEqual(customRole({ id: 'role_night_shift_2', name: 'Night Shift 2' }));
  });

  it('refuses a duplicate role name, and a name that maps to an existing id, with 409', async () => {
    await createRole({ name: 'Auditors' });
    expectError(await createRole({ name: 'Auditors' }), 409, 'A role with this name already exists');
    expectError(await createRole({ name: 'auditors!' }), 409, 'A role with this name already exists');
  });

  it('refuses a role without a usable name with 400', async () => {
    expectError(await createRole({ description: 'no name' }), 400, "Body field 'name' is required");
    expectError(await createRole({ name: '' }), 400, /^Body field 'name' must NOT have fewer than 1 characters$/);
    expectError(await createRole({ name: '!!!' }), 400, 'name must contain letters or digits');
  });

  it('ignores is_system in a create body: a created role is never a system role', async () => {
    const response = await createRole({ name: 'Pretenders', is_system: true }).expect(201);
    expect(response.body.data.is_system).toBe(false);
  });

  it('updates only the fields provided', async () => {
    await createRole({ name: 'Patch Target', description: 'before' });
    const described = await patchRole('role_patch_target', { description: 'after' }).expect(200);
    expect(described.body).toEqual({
      data: customRole({ id: 'role_patch_target', name: 'Patch Target', description: 'after' }),
      _links: { self: `http://${HOST}/v1/roles/role_patch_target` },
    });
    const flagged = await patchRole('role_patch_target', { requires_two_factor: true }).expect(200);
    expect(flagged.body.data).toEqual(
      customRole({ id: 'role_patch_target', name: 'Patch Target', description: 'after', requires_two_factor: true }),
    );
    const cleared = await patchRole('role_patch_target', { description: null }).expect(200);
    expect(cleared.body.data).toMatchObject({ name: 'Patch Target', description: null, requires_two_factor: true });
  });

  it('renames a custom role and keeps its id', async () => {
    await createRole({ name: 'Old Name' });
    const response = await patchRole('role_old_name', { name: 'New Name' }).expect(200);
    expect(response.body.data).toMatchObject({ id: 'role_old_name', name: 'New Name' });
    expect((await getRole('role_old_name').expect(200)).body.data.name).toBe('New Name');
  });

  it('refuses renaming a role to a name another role has with 409', async () => {
    await createRole({ name: 'Rename Clash' });
    expectError(await patchRole('role_rename_clash', { name: 'Admin' }), 409, 'A role with this name already exists');
  });

  it('refuses an empty PATCH body with 400', async () => {
    await createRole({ name: 'Empty Patch' });
    for (const body of [{}, { permissions: [] }]) {
      expectError(
        await patchRole('role_empty_patch', body),
        400,
        /^Give at least one of: name, description, requires_two_factor$/,
      );
    }
  });

  it('refuses renaming a system role with 400 but lets its description change', async () => {
    expectError(await patchRole('role_user', { name: 'Members' }), 400, 'System roles cannot be renamed');
    expect((await getRole('role_user').expect(200)).body.data.name).toBe('User');
    const original = (await getRole('role_developer').expect(200)).body.data.description;
    const described = await patchRole('role_developer', {
      name: 'Developer',
      description: 'Builds integrations',
    }).expect(200);
    expect(described.body.data).toMatchObject({
      id: 'role_developer',
      name: 'Developer',
      description: 'Builds integrations',
      is_system: true,
    });
    // Put back: other tests of this app read the built-in roles as seeded.
    expectStatus(await patchRole('role_developer', { description: original }), 200);
  });

  it('answers PATCH of an unknown role with 404', async () => {
    expectError(await patchRole('role_nonexistent', { description: 'x' }), 404, 'Role not found');
  });

  // Unknown body fields are stripped, as on POST (the Pretenders case above).
  it('ignores is_system and is_super_admin in a PATCH body', async () => {
    await createRole({ name: 'Climbers' });
    const response = await patchRole('role_climbers', {
      description: 'climbing',
      is_system: true,
      is_super_admin: true,
    }).expect(200);
    expect(response.body.data).toMatchObject({ id: 'role_climbers', description: 'climbing', is_system: false });
    const freshHolder = await createUser(t.app, ['role_climbers']);
    expectError(
      await client(t.app, freshHolder.token).get(`/v1/users/${UNKNOWN_UUID}/roles`, host),
      403,
      forbidden('users:read'),
    );
    expectStatus(await client(t.app, admin).delete('/v1/roles/role_climbers', host), 204);
  });

  it('a role manager cannot turn their own role into a super-admin role through PATCH', async () => {
    const escalators = await createRoleWith(t.app, 'Escalators', ['roles:read', 'roles:write']);
    const manager = await createUser(t.app, [escalators]);
    // Whether the unknown field is stripped (200) or refused (400) is secondary; it must never take effect.
    const patch = await client(t.app, manager.token).patch(
      `/v1/roles/${escalators}`,
      {
        description: 'trying',
        is_super_admin: true,
      },
      host,
    );
    expect([200, 400]).toContain(patch.status);
    const freshSession = await login(t.app, manager.username, manager.password);
    const attempt = await client(t.app, freshSession).post(
      '/v1/permissions',
      {
        resource: 'escalation',
        action: 'done',
      },
      host,
    );
    expectError(attempt, 403, forbidden('permissions:write'));
  });

  it('deletes a custom role with 204 and an empty body', async () => {
    await createRole({ name: 'Short Lived' });
    const response = await client(t.app, admin).delete('/v1/roles/role_short_lived', host).expect(204);
    expect(response.body).toBe('');
    expectError(await getRole('role_short_lived'), 404, 'Role not found');
  });

  it.each(BUILT_IN_ROLES.map((role) => role.id))('refuses deleting the system role %s with 403', async (id) => {
    expectError(await client(t.app, admin).delete(`/v1/roles/${id}`, host), 403, 'System roles cannot be deleted');
    expectStatus(await getRole(id), 200);
  });

  it('answers DELETE of an unknown role with 404', async () => {
    expectError(await client(t.app, admin).delete('/v1/roles/role_nonexistent', host), 404, 'Role not found');
  });
});

describe('role permissions', () => {
  let t: TestApp;
  let admin: string;
  let ids: Map<string, string>;
  let roleManager: string;
  const id = (permission: string) => ids.get(permission)!;

  beforeAll(async () => {
    t = await buildTestApp();
    admin = (await signInAdmin(t.app)).token;
    // The seeded catalogue has no roles:*; add it so a wildcard beyond roles:read + roles:write can be tried.
    expectStatus(await client(t.app, admin).post('/v1/permissions', { resource: 'roles', action: '*' }, host), 201);
    ids = await permissionIds(t.app, admin);
    await createRoleWith(t.app, 'Grant Target', []);
    const managers = await createRoleWith(t.app, 'Role Managers', ['roles:read', 'roles:write']);
    roleManager = (await createUser(t.app, [managers])).token;
  });
  afterAll(() => t.close());

  const listOf = (role: string, token = admin) => client(t.app, token).get(`/v1/roles/${role}/permissions`, host);
  const grant = (role: string, permission: string, token = admin) =>
    client(t.app, token).post(`/v1/roles/${role}/permissions`, { permission_id: id(permission) }, host);
  const revoke = (role: string, permission: string, token = admin) =>
    client(t.app, token).delete(`/v1/roles/${role}/permissions/${id(permission)}`, host);
  const heldBy = async (role: string) => names((await listOf(role).expect(200)).body.data).sort();

  it('lets a role manager change or delete only roles whose permissions they all hold', async () => {
    const wide = await createRoleWith(t.app, 'Wide Role', ['users:delete', 'roles:read']);
    const narrow = await createRoleWith(t.app, 'Narrow Role', ['roles:read']);
    const refusal = "The role holds 'users:delete', which you do not hold";
    expectError(
      await client(t.app, roleManager).patch(`/v1/roles/${wide}`, { requires_two_factor: true }, host),
      403,
      refusal,
    );
    expectStatus(
      await client(t.app, roleManager).patch(`/v1/roles/${narrow}`, { requires_two_factor: true }, host),
      200,
    );
    const deleter = await createRoleWith(t.app, 'Role Deleters', ['roles:read', 'roles:delete']);
    const deleterToken = (await createUser(t.app, [deleter])).token;
    expectError(await client(t.app, deleterToken).delete(`/v1/roles/${wide}`, host), 403, refusal);
    expectStatus(await client(t.app, deleterToken).delete(`/v1/roles/${narrow}`, host), 204);
  });

  it("lists a role's permissions as full permission objects", async () => {
    const response = await listOf('role_api_read_only').expect(200);
    const body = response.body;
    expect(body._links).toEqual({ self: `http://${HOST}/v1/roles/role_api_read_only/permissions` });
    expect(names(body.data).sort()).toEqual(READ_ONLY_PERMISSIONS);
    expect(body.data.find((p: { action: string; resource: string }) => p.resource === 'gps')).toEqual({
      id: id('gps:read'),
      resource: 'gps',
      action: 'read',
      description: 'Read gps',
      created_at: ISO_DATE,
      updated_at: ISO_DATE,
    });
  });

  it('lists *:* for the Admin role and nothing for a role without permissions', async () => {
    expect(await heldBy('role_admin')).toEqual(['*:*']);
    await createRoleWith(t.app, 'Holds Nothing Yet', []);
    expect(await heldBy('role_holds_nothing_yet')).toEqual([]);
  });

  it('answers 404 for the permissions of an unknown role', async () => {
    expectError(await listOf('role_nonexistent'), 404, 'Role not found');
  });

  it('grants a permission with 201 and the permission in the body', async () => {
    const response = await grant('role_grant_target', 'trips:delete').expect(201);
    expect(response.body).toEqual({
      data: {
        id: id('trips:delete'),
        resource: 'trips',
        action: 'delete',
        description: 'Delete trips',
        created_at: ISO_DATE,
        updated_at: ISO_DATE,
      },
      _links: { self: `http://${HOST}/v1/roles/role_grant_target/permissions/${id('trips:delete')}` },
    });
    expect(await heldBy('role_grant_target')).toContain('trips:delete');
  });

  it('refuses granting a permission the role already has with 409', async () => {
    expectStatus(await grant('role_grant_target', 'trips:read'), 201);
    expectError(await grant('role_grant_target', 'trips:read'), 409, 'The role already has this permission');
  });

  it('answers granting an unknown permission or to an unknown role with 404', async () => {
    const unknownPermission = await client(t.app, admin).post(
      '/v1/roles/role_grant_target/permissions',
      {
        permission_id: UNKNOWN_UUID,
      },
      host,
    );
    expectError(unknownPermission, 404, 'Permission not found');
    expectError(await grant('role_nonexistent', 'trips:read'), 404, 'Role not found');
  });

  it('refuses a permission_id that is missing or not a uuid with 400', async () => {
    expectError(
      await client(t.app, admin).post('/v1/roles/role_grant_target/permissions', unchecked({}), host),
      400,
      "Body field 'permission_id' is required",
    );
    const notUuid = await client(t.app, admin).post(
      '/v1/roles/role_grant_target/permissions',
      {
        permission_id: 'trips:read',
      },
      host,
    );
    expectError(notUuid, 400, /^Body field 'permission_id' must match format "uuid"$/);
  });

  it('revokes a granted permission with 204, and answers 404 once it is gone', async () => {
    expectStatus(await grant('role_grant_target', 'devices:write'), 201);
    const response = await revoke('role_grant_target', 'devices:write').expect(204);
    expect(response.body).toBe('');
    expect(await heldBy('role_grant_target')).not.toContain('devices:write');
    expectError(await revoke('role_grant_target', 'devices:write'), 404, 'The role does not have this permission');
  });

  it('answers revoking an unknown permission or from an unknown role with 404', async () => {
    const unknownPermission = await client(t.app, admin).delete(
      `/v1/roles/role_grant_target/permissions/${UNKNOWN_UUID}`,
      host,
    );
    expectError(unknownPermission, 404, 'The role does not have this permission');
    expectError(await revoke('role_nonexistent', 'trips:read'), 404, 'Role not found');
  });

  describe('a role manager who is not a super admin', () => {
    it('may grant a permission they hold', async () => {
      expectStatus(await grant('role_grant_target', 'roles:read', roleManager), 201);
      expect(await heldBy('role_grant_target')).toContain('roles:read');
    });

    it.each(['users:write', 'roles:delete', 'roles:*', '*:*'])(
      'may not grant %s, which they do not hold',
      async (permission) => {
        // Compared with before: another test (in any order) may have granted it as the super admin.
        const before = await heldBy('role_grant_target');
        expectError(
          await grant('role_grant_target', permission, roleManager),
          403,
          'You can only grant permissions you hold yourself',
        );
        expect(await heldBy('role_grant_target')).toEqual(before);
      },
    );

    it('may not revoke a permission they do not hold', async () => {
      expectStatus(await grant('role_grant_target', 'users:write'), 201);
      expectError(
        await revoke('role_grant_target', 'users:write', roleManager),
        403,
        'You can only revoke permissions you hold yourself',
      );
      expect(await heldBy('role_grant_target')).toContain('users:write');
    });

    it('may not grant to, revoke from or update the Admin role', async () => {
      const message = 'Only super admins may change a super-admin role';
      expectError(await grant('role_admin', 'roles:read', roleManager), 403, message);
      expectError(await revoke('role_admin', '*:*', roleManager), 403, message);
      expectError(
        await client(t.app, roleManager).patch('/v1/roles/role_admin', { description: 'mine now' }, host),
        403,
        message,
      );
      expect(await heldBy('role_admin')).toEqual(['*:*']);
      expect((await client(t.app, admin).get('/v1/roles/role_admin', host).expect(200)).body.data.description).toBe(
        'Super administrator: may do everything',
      );
    });

    it('may not delete roles without roles:delete', async () => {
      expectError(
        await client(t.app, roleManager).delete('/v1/roles/role_grant_target', host),
        403,
        forbidden('roles:delete'),
      );
    });
  });
});

describe('role and permission changes apply to live credentials', () => {
  let t: TestApp;
  let admin: string;
  let ids: Map<string, string>;
  let other: Awaited<ReturnType<typeof createUser>>;
  beforeAll(async () => {
    t = await buildTestApp();
    admin = (await signInAdmin(t.app)).token;
    ids = await permissionIds(t.app, admin);
    other = await createUser(t.app);
  });
  afterAll(() => t.close());

  const grant = (role: string, permission: string) =>
    client(t.app, admin).post(`/v1/roles/${role}/permissions`, { permission_id: ids.get(permission)! }, host);
  const revoke = (role: string, permission: string) =>
    client(t.app, admin).delete(`/v1/roles/${role}/permissions/${ids.get(permission)}`, host);
  /** Needs users:read: the other user's roles. */
  const readOthersRoles = (token: string) => client(t.app, token).get(`/v1/users/${other.id}/roles`, host);

  it('a permission granted to a held role works on the next request, and stops working once revoked', async () => {
    const role = await createRoleWith(t.app, 'Live Grants', []);
    const user = await createUser(t.app, ['role_user', role]);
    expectError(await readOthersRoles(user.token), 403, forbidden('users:read'));

    expectStatus(await grant(role, 'users:read'), 201);
    const allowed = await readOthersRoles(user.token).expect(200);
    expect(allowed.body).toEqual({ roles: [summaryOf('role_user')] });

    expectStatus(await revoke(role, 'users:read'), 204);
    expectError(await readOthersRoles(user.token), 403, forbidden('users:read'));
  });

  it('a role assigned to a user works on the next request, and stops working once removed', async () => {
    const user = await createUser(t.app);
    expectError(await client(t.app, user.token).get('/v1/roles', host), 403, forbidden('roles:read'));

    expectStatus(
      await client(t.app, admin).post(`/v1/users/${user.id}/roles`, { role_id: 'role_api_read_only' }, host),
      201,
    );
    expectStatus(await client(t.app, user.token).get('/v1/roles', host), 200);

    expectStatus(await client(t.app, admin).delete(`/v1/users/${user.id}/roles/role_api_read_only`, host), 204);
    expectError(await client(t.app, user.token).get('/v1/roles', host), 403, forbidden('roles:read'));
  });

  it("a user's role change drops only that user's credentials, their own keys included", async () => {
    const user = await createUser(t.app, ['role_user', 'role_developer', 'role_api_read_only']);
    const key = await createApiKey(t.app, user.token, { name: 'reader', scopes: ['roles:read'] });
    expectStatus(await client(t.app, key.key).get('/v1/roles', host), 200);
    const generation = await t.kv.get('credentials:generation');

    expectStatus(await client(t.app, admin).delete(`/v1/users/${user.id}/roles/role_api_read_only`, host), 204);
    expectError(await client(t.app, user.token).get('/v1/roles', host), 403, forbidden('roles:read'));
    expectError(await client(t.app, key.key).get('/v1/roles', host), 403, forbidden('roles:read'));
    // No new generation: everybody else's cached credentials stay where they are.
    expect(await t.kv.get('credentials:generation')).toBe(generation);
  });

  it('deleting a custom role takes its permissions from holders on the next request', async () => {
    const role = await createRoleWith(t.app, 'Doomed', ['roles:read']);
    const user = await createUser(t.app, [role]);
    expectStatus(await client(t.app, user.token).get('/v1/roles', host), 200);
    expectStatus(await client(t.app, admin).delete(`/v1/roles/${role}`, host), 204);
    expectError(await client(t.app, user.token).get('/v1/roles', host), 403, forbidden('roles:read'));
  });

  it('a revoke takes effect even when it lands in the same millisecond as the grant before it', async () => {
    const role = await createRoleWith(t.app, 'Same Millisecond', []);
    const user = await createUser(t.app, [role]);
    const now = Date.now();
    const clock = vi.spyOn(Date, 'now').mockReturnValue(now);
    try {
      expectStatus(await grant(role, 'users:read'), 201);
      expectStatus(await readOthersRoles(user.token), 200);
      expectStatus(await revoke(role, 'users:read'), 204);
      expectError(await readOthersRoles(user.token), 403, forbidden('users:read'));
    } finally {
      clock.mockRestore();
    }
  });
});

describe('permission catalogue', () => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    t = await buildTestApp();
    admin = (await signInAdmin(t.app)).token;
  });
  afterAll(() => t.close());

  const createPermission = (body: object) => client(t.app, admin).post('/v1/permissions', unchecked(body), host);
  const listPermissions = async () =>
    (await client(t.app, admin).get('/v1/permissions', host).expect(200)).body.data as {
      id: string;
      resource: string;
      action: string;
    }[];

  it('lists the seeded catalogue in a { data, _links } envelope', async () => {
    const response = await client(t.app, admin).get('/v1/permissions', host).expect(200);
    const body = response.body;
    expect(body._links).toEqual({ self: `http://${HOST}/v1/permissions` });
    expect(names(body.data)).toEqual(
      expect.arrayContaining([
        'gps:read',
        'trips:delete',
        'community:guild.sync',
        'two_factor:manage',
        '*:*',
        'gps:*',
        'permissions:write',
      ]),
    );
    expect(body.data).toHaveLength(new Set(names(body.data)).size);
    expect(body.data.find((p: { resource: string }) => p.resource === '*')).toEqual({
      id: UUID,
      resource: '*',
      action: '*',
      description: 'Everything',
      created_at: ISO_DATE,
      updated_at: ISO_DATE,
    });
  });

  it('gets one permission by id', async () => {
    const twoFactor = (await listPermissions()).find((p) => p.resource === 'two_factor' && p.action === 'manage')!;
    const response = await client(t.app, admin).get(`/v1/permissions/${twoFactor.id}`, host).expect(200);
    expect(response.body).toEqual({
      data: {
        id: twoFactor.id,
        resource: 'two_factor',
        action: 'manage',
        description: 'Manage two factor',
        created_at: ISO_DATE,
        updated_at: ISO_DATE,
      },
      _links: { self: `http://${HOST}/v1/permissions/${twoFactor.id}` },
    });
  });

  it('answers 404 for an unknown permission id and 400 for one that is not a uuid', async () => {
    expectError(await client(t.app, admin).get(`/v1/permissions/${UNKNOWN_UUID}`, host), 404, 'Permission not found');
    expectError(
      await client(t.app, admin).get('/v1/permissions/gps:read', host),
      400,
      /^Path parameter 'id' must match format "uuid"$/,
    );
  });

  it('creates a permission with 201; it is then listed and retrievable', async () => {
    const response = await createPermission({
      resource: 'reports',
      action: 'export',
      description: 'Export reports',
    }).expect(201);
    const created = response.body;
    expect(created).toEqual({
      data: {
        id: UUID,
        resource: 'reports',
        action: 'export',
        description: 'Export reports',
        created_at: ISO_DATE,
        updated_at: ISO_DATE,
      },
      _links: { self: `http://${HOST}/v1/permissions/${created.data?.id}` },
    });
    expect(names(await listPermissions())).toContain('reports:export');
    expect((await client(t.app, admin).get(`/v1/permissions/${created.data.id}`, host).expect(200)).body.data).toEqual(
      created.data,
    );
  });

  it('creates a permission without a description and with a dotted action', async () => {
    const response = await createPermission({ resource: 'community', action: 'channel.sync' }).expect(201);
    expect(response.body.data).toMatchObject({ resource: 'community', action: 'channel.sync', description: null });
  });

  it('refuses a duplicate permission with 409', async () => {
    expectError(
      await createPermission({ resource: 'gps', action: 'read' }),
      409,
      "Permission 'gps:read' already exists",
    );
  });

  it.each([
    [{ resource: 'Bad Resource', action: 'read' }, /^Body field 'resource' must match pattern/],
    [{ resource: 'reports', action: 'Read' }, /^Body field 'action' must match pattern/],
    [{ resource: 'reports:x', action: 'read' }, /^Body field 'resource' must match pattern/],
    [{ action: 'read' }, /^Body field 'resource' is required$/],
    [{ resource: 'reports' }, /^Body field 'action' is required$/],
  ])('refuses %j with 400', async (body, message) => {
    expectError(await createPermission(body), 400, message);
  });
});

describe('wildcard permissions', () => {
  let t: TestApp;
  let admin: string;
  let ids: Map<string, string>;
  beforeAll(async () => {
    t = await buildTestApp();
    admin = (await signInAdmin(t.app)).token;
    ids = await permissionIds(t.app, admin);
    await createRoleWith(t.app, 'Wildcard Target', []);
  });
  afterAll(() => t.close());

  const grant = (role: string, permission: string, token: string) =>
    client(t.app, token).post(`/v1/roles/${role}/permissions`, { permission_id: ids.get(permission)! }, host);

  it('API Full Access (gps:*, users:read, roles:read) may list roles but not create them', async () => {
    const user = await createUser(t.app, ['role_api_full_access']);
    expectStatus(await client(t.app, user.token).get('/v1/roles', host), 200);
    expectError(
      await client(t.app, user.token).post('/v1/roles', { name: 'Not Allowed' }, host),
      403,
      forbidden('roles:write'),
    );
    expectError(await client(t.app, user.token).get('/v1/permissions', host), 403, forbidden('permissions:read'));
  });

  it('a held resource:* covers every action of that resource when granting, but not other resources', async () => {
    const managers = await createRoleWith(t.app, 'Role Managers', ['roles:read', 'roles:write']);
    const user = await createUser(t.app, ['role_api_full_access', managers]);
    expectStatus(await grant('role_wildcard_target', 'gps:read', user.token), 201);
    expectStatus(await grant('role_wildcard_target', 'gps:*', user.token), 201);
    expectError(
      await grant('role_wildcard_target', 'users:write', user.token),
      403,
      'You can only grant permissions you hold yourself',
    );
    expectError(
      await grant('role_wildcard_target', '*:*', user.token),
      403,
      'You can only grant permissions you hold yourself',
    );
  });

  it('a custom role holding *:* allows everything, yet its holder is not a super admin', async () => {
    const created = await client(t.app, admin).post('/v1/roles', { name: 'Everything Custom' }, host).expect(201);
    expectStatus(await grant('role_everything_custom', '*:*', admin), 201);
    const user = await createUser(t.app);
    const other = await createUser(t.app);
    expectStatus(
      await client(t.app, admin).post(`/v1/users/${user.id}/roles`, { role_id: 'role_everything_custom' }, host),
      201,
    );

    expectStatus(await client(t.app, user.token).get(`/v1/users/${other.id}/roles`, host), 200);
    expectStatus(await client(t.app, user.token).post('/v1/roles', { name: 'Made By Wildcard' }, host), 201);
    expectStatus(
      await client(t.app, user.token).post('/v1/permissions', { resource: 'wildcard', action: 'made' }, host),
      201,
    );
    expectStatus(await grant('role_made_by_wildcard', 'users:delete', user.token), 201);

    const superAdminOnly = 'Only super admins may change a super-admin role';
    expectError(
      await client(t.app, user.token).patch('/v1/roles/role_admin', { description: 'x' }, host),
      403,
      superAdminOnly,
    );
    const assignAdmin = await client(t.app, user.token).post(
      `/v1/users/${other.id}/roles`,
      { role_id: 'role_admin' },
      host,
    );
    expectError(assignAdmin, 403, 'You can only assign or remove roles you hold yourself');
    expect((await client(t.app, user.token).get(`/v1/users/${user.id}/permissions`, host)).body).toEqual({
      permissions: ['*:*', ...OWN_ACCOUNT],
    });
  });
});

/**
 * What role_user holds: the permissions a key needs on routes of its owner's own account (issue 36), their
 * own devices, trips and geofences (issue 43), their groups and their preferences (issue 49).
 */
const OWN_ACCOUNT = [
  'api_keys:delete',
  'api_keys:read',
  'api_keys:write',
  'audit:read_own',
  'audit:report_own',
  'connected_apps:read',
  'connected_apps:revoke',
  'connected_apps:sign_out',
  'devices:delete_own',
  'devices:read_own',
  'devices:write_own',
  'events:read_own',
  'export:read',
  'geofences:delete_own',
  'geofences:read_own',
  'geofences:write_own',
  'gps:delete_own',
  'gps:read_own',
  'gps:write_own',
  'groups:read',
  'groups:write',
  'integrations:read',
  'integrations:write',
  'notifications:read',
  'notifications:write',
  'preferences:read',
  'preferences:write',
  'trips:delete_own',
  'trips:read_own',
  'trips:write_own',
];

describe('roles and permissions of users', () => {
  let t: TestApp;
  let admin: { id: string; token: string };
  let userManager: Awaited<ReturnType<typeof createUser>>;
  beforeAll(async () => {
    t = await buildTestApp();
    admin = await signInAdmin(t.app);
    const managers = await createRoleWith(t.app, 'User Managers', ['users:read', 'users:write']);
    userManager = await createUser(t.app, [managers]);
  });
  afterAll(() => t.close());

  const rolesOf = (userId: string, token: string) => client(t.app, token).get(`/v1/users/${userId}/roles`, host);
  const permissionsOf = (userId: string, token: string) =>
    client(t.app, token).get(`/v1/users/${userId}/permissions`, host);
  const assign = (userId: string, roleId: string, token = admin.token) =>
    client(t.app, token).post(`/v1/users/${userId}/roles`, { role_id: roleId }, host);
  const remove = (userId: string, roleId: string, token = admin.token) =>
    client(t.app, token).delete(`/v1/users/${userId}/roles/${roleId}`, host);
  const roleIdsOf = async (userId: string) =>
    ((await rolesOf(userId, admin.token).expect(200)).body.roles as { id: string }[]).map((r) => r.id).sort();

  it('a user without users:read sees their own roles and permissions', async () => {
    const user = await createUser(t.app);
    const roles = await rolesOf(user.id, user.token).expect(200);
    expect(roles.body).toEqual({ roles: [summaryOf('role_user')] });
    const permissions = await permissionsOf(user.id, user.token).expect(200);
    expect(permissions.body).toEqual({ permissions: OWN_ACCOUNT });
  });

  it("a user without users:read may not see another user's roles or permissions", async () => {
    const user = await createUser(t.app);
    const other = await createUser(t.app);
    expectError(await rolesOf(other.id, user.token), 403, forbidden('users:read'));
    expectError(await permissionsOf(other.id, user.token), 403, forbidden('users:read'));
  });

  it("the super admin sees anyone's roles and permissions", async () => {
    const user = await createUser(t.app, ['role_user', 'role_developer']);
    const roles = await rolesOf(user.id, admin.token).expect(200);
    expect(roles.body).toEqual({ roles: [summaryOf('role_developer'), summaryOf('role_user')] });
    expect((await permissionsOf(user.id, admin.token)).body).toEqual({
      permissions: [...OWN_ACCOUNT, 'oauth_clients:delete', 'oauth_clients:read', 'oauth_clients:write'].sort(),
    });
    expect((await permissionsOf(admin.id, admin.token)).body).toEqual({ permissions: ['*:*', ...OWN_ACCOUNT] });
  });

  it('returns effective permissions sorted and without duplicates across roles', async () => {
    const user = await createUser(t.app, ['role_api_read_only', 'role_api_full_access']);
    const response = await permissionsOf(user.id, user.token).expect(200);
    const { permissions } = response.body;
    expect(permissions).toEqual([...permissions].sort());
    expect(permissions.filter((p: string) => p === 'users:read')).toEqual(['users:read']);
    expect(permissions).toEqual(expect.arrayContaining(['gps:*', 'gps:read', 'roles:read', 'settings:*']));
  });

  it('lists exactly the API Read Only permissions for its holder', async () => {
    const user = await createUser(t.app, ['role_api_read_only']);
    expect((await permissionsOf(user.id, user.token)).body).toEqual({ permissions: READ_ONLY_PERMISSIONS });
  });

  it('answers 404 for an unknown user and 400 for an id that is not a uuid', async () => {
    expectError(await rolesOf(UNKNOWN_UUID, admin.token), 404, 'User not found');
    expectError(await permissionsOf(UNKNOWN_UUID, admin.token), 404, 'User not found');
    expectError(await rolesOf('admin', admin.token), 400, /^Path parameter 'id' must match format "uuid"$/);
  });

  it('the super admin assigns any role with 201 and the resulting roles in the body', async () => {
    const user = await createUser(t.app);
    const response = await assign(user.id, 'role_api_full_access').expect(201);
    expect(response.body).toEqual({ roles: [summaryOf('role_api_full_access'), summaryOf('role_user')] });
    expect(await roleIdsOf(user.id)).toEqual(['role_api_full_access', 'role_user']);
  });

  it('refuses assigning a role the user already has with 409', async () => {
    const user = await createUser(t.app);
    expectError(await assign(user.id, 'role_user'), 409, 'The user already has this role');
  });

  it('answers assigning an unknown role or to an unknown user with 404, and a bad role id with 400', async () => {
    const user = await createUser(t.app);
    expectError(await assign(user.id, 'role_nonexistent'), 404, 'Role not found');
    expectError(await assign(UNKNOWN_UUID, 'role_user'), 404, 'User not found');
    expectError(await assign(user.id, 'developer'), 400, /^Body field 'role_id' must match pattern/);
    expect(await roleIdsOf(user.id)).toEqual(['role_user']);
  });

  describe('a user manager who is not a super admin', () => {
    it('may read other users and assign a role they hold', async () => {
      const user = await createUser(t.app);
      expectStatus(await rolesOf(user.id, userManager.token), 200);
      const response = await assign(user.id, 'role_user_managers', userManager.token).expect(201);
      expect(response.body).toEqual({
        roles: [summaryOf('role_user'), { id: 'role_user_managers', name: 'User Managers', description: null }],
      });
    });

    it.each(['role_api_full_access', 'role_admin', 'role_developer'])(
      'may not assign %s, which they do not hold',
      async (roleId) => {
        const user = await createUser(t.app);
        expectError(
          await assign(user.id, roleId, userManager.token),
          403,
          'You can only assign or remove roles you hold yourself',
        );
        expect(await roleIdsOf(user.id)).toEqual(['role_user']);
      },
    );

    it('may not, through a key a super admin gave a role they lack, assign that role to anyone (themselves included)', async () => {
      const manager = await createUser(t.app, ['role_user_managers', 'role_developer']);
      const key = await createApiKey(t.app, manager.token, {
        name: 'user admin key',
        scopes: ['users:read', 'users:write'],
      });
      expectStatus(
        await client(t.app, admin.token).post(
          `/v1/api-keys/${key.id}/roles`,
          { role_id: 'role_api_full_access' },
          host,
        ),
        201,
      );
      const user = await createUser(t.app);
      for (const target of [manager.id, user.id]) {
        expectError(
          await assign(target, 'role_api_full_access', key.key),
          403,
          'You can only assign or remove roles you hold yourself',
        );
      }
      expect(await roleIdsOf(manager.id)).not.toContain('role_api_full_access');
      expect(await roleIdsOf(user.id)).toEqual(['role_user']);
    });

    it('may not remove a role they do not hold, such as Admin from another super admin', async () => {
      const other = await createUser(t.app, ['role_user', 'role_admin']);
      expectError(
        await remove(other.id, 'role_admin', userManager.token),
        403,
        'You can only assign or remove roles you hold yourself',
      );
      expectError(
        await remove(other.id, 'role_user', userManager.token),
        403,
        'You can only assign or remove roles you hold yourself',
      );
      expect(await roleIdsOf(other.id)).toEqual(expect.arrayContaining(['role_admin', 'role_user']));
      expectStatus(await remove(other.id, 'role_admin'), 204); // the bootstrap admin is the only super admin again
    });
  });

  it('removes a role with 204, and answers 404 when the user does not hold it', async () => {
    const user = await createUser(t.app, ['role_user', 'role_developer']);
    const response = await remove(user.id, 'role_developer').expect(204);
    expect(response.body).toBe('');
    expect(await roleIdsOf(user.id)).toEqual(['role_user']);
    expectError(await remove(user.id, 'role_developer'), 404, 'The user does not have this role');
  });

  it('answers removing from an unknown user or an unknown role with 404', async () => {
    const user = await createUser(t.app);
    expectError(await remove(UNKNOWN_UUID, 'role_user'), 404, 'User not found');
    expectError(await remove(user.id, 'role_nonexistent'), 404, 'Role not found');
  });

  it('refuses removing the Admin role from the only super admin with 409', async () => {
    expectError(await remove(admin.id, 'role_admin'), 409, 'The last super admin cannot lose that role');
    // However the id is spelled: upper case names the same user.
    expectError(await remove(admin.id.toUpperCase(), 'role_admin'), 409, 'The last super admin cannot lose that role');
    expect(await roleIdsOf(admin.id)).toContain('role_admin');
    expectStatus(await client(t.app, admin.token).get('/v1/roles', host), 200);
  });

  it('lets a second super admin lose the Admin role while the bootstrap admin keeps it', async () => {
    const second = await createUser(t.app);
    expectStatus(await assign(second.id, 'role_admin'), 201);
    expectStatus(await client(t.app, second.token).post('/v1/roles', { name: 'Second Admin Made' }, host), 201);
    expectStatus(await remove(second.id, 'role_admin'), 204);
    expectError(
      await client(t.app, second.token).post('/v1/roles', { name: 'Second Admin Again' }, host),
      403,
      forbidden('roles:write'),
    );
    expectError(await remove(admin.id, 'role_admin'), 409, 'The last super admin cannot lose that role');
  });
});

describe('OpenAPI document of the access endpoints', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(() => t.close());

  it('marks GET /v1/roles as bearer-protected and requiring roles:read', async () => {
    const response = await client(t.app).raw({ url: '/v1/openapi.json', ...host });
    expectStatus(response, 200);
    const { paths } = response.body;
    expect(paths['/v1/roles'].get).toMatchObject({
      security: [{ bearer: [] }],
      'x-permission': 'roles:read',
      description: expect.stringContaining('Requires permission `roles:read`.'),
    });
    expect(paths['/v1/roles'].post['x-permission']).toBe('roles:write');
    expect(paths['/v1/roles/{id}'].delete['x-permission']).toBe('roles:delete');
    expect(paths['/v1/permissions'].get['x-permission']).toBe('permissions:read');
  });

  it('documents the "or self" rule on a user\'s roles and permissions', async () => {
    const { paths } = (await client(t.app).raw({ url: '/v1/openapi.json', ...host })).body;
    for (const path of ['/v1/users/{id}/roles', '/v1/users/{id}/permissions']) {
      expect(paths[path].get).toMatchObject({
        security: [{ bearer: [] }],
        'x-permission': 'users:read',
        description: expect.stringContaining('(or acting on your own user)'),
      });
    }
  });
});
