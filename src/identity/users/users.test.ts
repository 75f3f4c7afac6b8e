import { createHash, randomUUID } from 'node:crypto';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { unchecked, type RequestBody } from '../../../test/client.js';
import {
  adminIdOf,
  buildTestApp,
  createApiKey,
  createRoleWith,
  createUser,
  forbidden,
  login,
  ownerlessKey,
  TEST_ADMIN,
  TEST_SYSTEM_KEY,
  UNAUTHORIZED,
  type TestApp,
} from '../../../test/helpers.js';

type TestUser = Awaited<ReturnType<typeof createUser>>;

const USER_NOT_FOUND = { error: 'NotFound', message: 'User not found', code: 'user.not_found' };
const BAD_USERNAME = {
  error: 'BadRequest',
  message: 'username must be 3-30 characters of letters, digits and underscores',
  code: 'user.invalid_username',
};
const USERNAME_TAKEN = { error: 'Conflict', message: 'Username is already taken', code: 'user.username_taken' };
const NO_FIELDS = {
  error: 'BadRequest',
  message: 'Give at least one of: username, email, avatar_url, privacy_mode, avatars_enabled',
  code: 'request.validation',
};

function expectResponse(response: { status: number; body: unknown }, status: number, body?: unknown) {
  expect({ status: response.status, body: body === undefined ? undefined : response.body }).toEqual({
    status,
    body,
  });
}

const ISO = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/);

/** The User resource as the API shows it, from what a test knows. */
function userBody(id: string, username: string, extra: Record<string, unknown> = {}) {
  return {
    id,
    username,
    primary_platform_account_id: expect.any(String),
    created_at: ISO,
    updated_at: ISO,
    last_login_at: ISO,
    deleted_at: null,
    privacy_mode: false,
    avatars_enabled: true,
    preferred_locale: null,
    ...extra,
  };
}

const auditOf = (t: TestApp, eventType: string, userId: string) =>
  t.database.db
    .selectFrom('audit_events')
    .selectAll()
    .where('event_type', '=', eventType)
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .execute();

describe('reading users', () => {
  let t: TestApp;
  let admin: string;
  let alice: TestUser;
  let bob: TestUser;
  let developer: TestUser;

  beforeAll(async () => {
    t = await buildTestApp();
    admin = await login(t.app, TEST_ADMIN.username, TEST_ADMIN.password);
    alice = await createUser(t.app);
    bob = await createUser(t.app);
    developer = await createUser(t.app, ['role_user', 'role_developer']);
  });
  afterAll(() => t.close());

  it('lists users page by page, oldest first, for users:read', async () => {
    const body = (
      await t
        .as(admin)
        .get('/v1/users', { query: { limit: 2 } })
        .expect(200)
    ).body;
    expect(body.data.map((u) => u.username)).toEqual([TEST_ADMIN.username, alice.username]);
    expect(body.data[1]).toEqual(userBody(alice.id, alice.username));
    expect(body.pagination).toEqual({ page: 1, limit: 2, total: 4, total_pages: 2 });
    expect(body._links.next).toMatch(/page=2/);
    expect(body._links.prev).toBeUndefined();

    const second = (
      await t
        .as(admin)
        .get('/v1/users', { query: { page: 2, limit: 2 } })
        .expect(200)
    ).body;
    expect(second.data.map((u) => u.id)).toEqual([bob.id, developer.id]);
  });

  it('filters by role_id and defaults to 20 per page', async () => {
    const response = await t
      .as(admin)
      .get('/v1/users', { query: { role_id: 'role_developer' } })
      .expect(200);
    expect(response.body.data.map((u) => u.id)).toEqual([developer.id]);
    expect(response.body.pagination).toEqual({ page: 1, limit: 20, total: 1, total_pages: 1 });
    expect(response.body._links.self).toContain('role_id=role_developer');
    expect(
      (
        await t
          .as(admin)
          .get('/v1/users', { query: { role_id: 'role_nobody_has' } })
          .expect(200)
      ).body.data,
    ).toEqual([]);
  });

  it('refuses a limit over 100, anonymous callers and callers without users:read', async () => {
    expectResponse(await t.as(admin).get('/v1/users?limit=101'), 400, {
      error: 'BadRequest',
      message: "Query parameter 'limit' must be <= 100",
      code: 'request.validation',
    });
    expectResponse(await t.as(null).get('/v1/users'), 401, UNAUTHORIZED);
    expectResponse(await t.as(alice.token).get('/v1/users'), 403, forbidden('users:read'));
  });

  it('shows a user to themselves and to users:read holders, nobody else', async () => {
    expectResponse(await t.as(alice.token).get(`/v1/users/${alice.id}`), 200, {
      data: userBody(alice.id, alice.username),
      _links: { self: expect.stringContaining(`/v1/users/${alice.id}`) },
    });
    expect((await t.as(admin).get(`/v1/users/${alice.id}`)).status).toBe(200);
    expectResponse(await t.as(bob.token).get(`/v1/users/${alice.id}`), 403, forbidden('users:read'));
    expectResponse(await t.as(admin).get(`/v1/users/${randomUUID()}`), 404, USER_NOT_FOUND);
    expectResponse(await t.as(admin).get('/v1/users/not-a-uuid'), 400, {
      error: 'BadRequest',
      message: 'Path parameter \'id\' must match format "uuid"',
      code: 'request.validation',
    });
  });

  it('GET /v1/users/me answers the caller; a key without an owner has no user (404); the system key is refused (403)', async () => {
    expectResponse(await t.as(bob.token).get('/v1/users/me'), 200, {
      data: userBody(bob.id, bob.username),
      _links: { self: expect.stringContaining('/v1/users/me') },
    });
    const devKey = await createApiKey(t.app, developer.token, { name: 'dev key', scopes: [] });
    expect((await t.as(devKey.key).get('/v1/users/me').expect(200)).body.data.id).toBe(developer.id);
    expectResponse(await t.as(await ownerlessKey(t, ['users:read'])).get('/v1/users/me'), 404, {
      error: 'NotFound',
      message: 'This credential does not belong to a user',
      code: 'user.credential_without_user',
    });
    expectResponse(await t.as(TEST_SYSTEM_KEY).get('/v1/users/me'), 403, {
      error: 'Forbidden',
      message: 'System key not permitted on this route',
      code: 'auth.system_key_not_permitted',
    });
    expectResponse(await t.as(null).get('/v1/users/me'), 401, UNAUTHORIZED);
  });

  it('documents every users route in a valid OpenAPI document, with its permission', async () => {
    const document = (await t.as(null).raw({ method: 'GET', url: '/v1/openapi.json' })).body;
    const result = await new Validator().validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(document.paths['/v1/users'].get['x-permission']).toBe('users:read');
    expect(document.paths['/v1/users/{id}'].delete['x-permission']).toBe('users:delete');
    for (const path of [
      '/v1/users/me',
      '/v1/users/{id}/profile',
      '/v1/users/{id}/locale',
      '/v1/users/{id}/username',
      '/v1/users/{id}/email/request-change',
      '/v1/users/email/verify',
      '/v1/users/{id}/email/pending',
      '/v1/users/oauth',
      '/v1/users/email/{email}',
    ]) {
      expect(document.paths).toHaveProperty([path]);
    }
  });

  it('shows the profile from the primary account', async () => {
    expectResponse(await t.as(alice.token).get(`/v1/users/${alice.id}/profile`), 200, {
      name: alice.username,
      display_name: alice.username,
      picture: null,
      provider: 'email',
      primary_provider: 'email',
      last_login_at: ISO,
      created_at: ISO,
      privacy_mode: false,
      avatars_enabled: true,
    });
    expect((await t.as(admin).get(`/v1/users/${alice.id}/profile`)).status).toBe(200);
    expectResponse(await t.as(bob.token).get(`/v1/users/${alice.id}/profile`), 403, forbidden('users:read'));
    expectResponse(await t.as(admin).get(`/v1/users/${randomUUID()}/profile`), 404, USER_NOT_FOUND);
  });
});

describe('updating users', () => {
  let t: TestApp;
  let admin: string;
  let alice: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    t = await buildTestApp();
    admin = await login(t.app, TEST_ADMIN.username, TEST_ADMIN.password);
  });
  afterAll(() => t.close());
  // Fresh users for each test: the tests change them and count their audit events.
  beforeEach(async () => {
    alice = await createUser(t.app);
    bob = await createUser(t.app);
  });

  const patch = (id: string, token: string | null, body: RequestBody<'patch', '/v1/users/{id}'>) =>
    t.as(token).patch(`/v1/users/${id}`, body);
  const patchUsername = (id: string, token: string | null, body: RequestBody<'patch', '/v1/users/{id}/username'>) =>
    t.as(token).patch(`/v1/users/${id}/username`, body);
  const patchLocale = (id: string, token: string | null, body: RequestBody<'patch', '/v1/users/{id}/locale'>) =>
    t.as(token).patch(`/v1/users/${id}/locale`, body);

  it('changes only the fields given and records user_updated with their names', async () => {
    const response = await patch(alice.id, alice.token, { privacy_mode: true });
    expectResponse(response, 200, {
      data: userBody(alice.id, alice.username, { privacy_mode: true }),
      _links: { self: expect.any(String) },
    });
    const events = await auditOf(t, 'user_updated', alice.id);
    expect(events.map((e) => [e.metadata, e.actor_id, e.resource_id])).toEqual([
      [{ fields: ['privacy_mode'] }, alice.id, alice.id],
    ]);
    // The same value again changes nothing and records nothing.
    expect((await patch(alice.id, alice.token, { privacy_mode: true })).status).toBe(200);
    expect(await auditOf(t, 'user_updated', alice.id)).toHaveLength(1);
  });

  it('needs at least one known field', async () => {
    expectResponse(await patch(alice.id, alice.token, unchecked({})), 400, NO_FIELDS);
    expectResponse(await patch(alice.id, alice.token, unchecked({ nickname: 'x' })), 400, NO_FIELDS);
    expectResponse(await patch(alice.id, alice.token, unchecked({ privacy_mode: 'yes' })), 400, {
      error: 'BadRequest',
      message: "Body field 'privacy_mode' must be boolean",
      code: 'request.validation',
    });
  });

  it('lets only the user or a users:write holder change a user', async () => {
    expectResponse(await patch(alice.id, bob.token, { privacy_mode: false }), 403, forbidden('users:write'));
    expectResponse(await patch(alice.id, null, { privacy_mode: false }), 401, UNAUTHORIZED);
    expect((await patch(alice.id, admin, { privacy_mode: false }).expect(200)).body.data.privacy_mode).toBe(false);
    expectResponse(await patch(randomUUID(), admin, { privacy_mode: false }), 404, USER_NOT_FOUND);
  });

  it('changes the username (stored lower case) with the length, character and uniqueness rules', async () => {
    const name = `Renamed_${process.pid}`;
    expect((await patch(alice.id, alice.token, { username: name }).expect(200)).body.data.username).toBe(
      name.toLowerCase(),
    );
    alice.username = name.toLowerCase();
    expectResponse(await patch(alice.id, alice.token, { username: 'ab' }), 400, BAD_USERNAME);
    expectResponse(await patch(alice.id, alice.token, { username: 'a'.repeat(31) }), 400, BAD_USERNAME);
    expectResponse(await patch(alice.id, alice.token, { username: 'no-dashes' }), 400, BAD_USERNAME);
    expectResponse(await patch(alice.id, alice.token, { username: bob.username }), 409, USERNAME_TAKEN);
    expectResponse(
      await patch(alice.id, alice.token, { username: TEST_ADMIN.username.toUpperCase() }),
      409,
      USERNAME_TAKEN,
    );
    // Signing in works with the new name.
    expect(await login(t.app, alice.username, alice.password)).toMatch(/^ses_/);
  });

  it('PATCH /v1/users/{id}/username: 200, 400, 404, 409', async () => {
    const name = `only_name_${process.pid}`;
    expect((await patchUsername(bob.id, bob.token, { username: name }).expect(200)).body.data.username).toBe(name);
    bob.username = name;
    expectResponse(await patchUsername(bob.id, bob.token, { username: 'x y z' }), 400, BAD_USERNAME);
    expectResponse(await patchUsername(randomUUID(), admin, { username: 'free_name' }), 404, USER_NOT_FOUND);
    expectResponse(await patchUsername(bob.id, bob.token, { username: alice.username }), 409, USERNAME_TAKEN);
    expectResponse(await patchUsername(bob.id, bob.token, unchecked({})), 400, {
      error: 'BadRequest',
      message: "Body field 'username' is required",
      code: 'request.validation',
    });
    expectResponse(
      await patchUsername(bob.id, alice.token, { username: 'stolen_name' }),
      403,
      forbidden('users:write'),
    );
    const events = await auditOf(t, 'user_updated', bob.id);
    expect(events.at(-1)!.metadata).toEqual({ fields: ['username'] });
  });

  it('PATCH /v1/users/{id}/locale accepts the supported locales and null', async () => {
    expect((await patchLocale(alice.id, alice.token, { locale: 'de' }).expect(200)).body.data.preferred_locale).toBe(
      'de',
    );
    expect((await t.as(alice.token).get('/v1/users/me').expect(200)).body.data.preferred_locale).toBe('de');
    expectResponse(await patchLocale(alice.id, alice.token, unchecked({ locale: 'fr' })), 400, {
      error: 'BadRequest',
      message: 'locale must be one of: en, de (or null)',
      code: 'user.unsupported_locale',
    });
    expect((await patchLocale(alice.id, alice.token, { locale: null }).expect(200)).body.data.preferred_locale).toBe(
      null,
    );
    expectResponse(await patchLocale(alice.id, alice.token, unchecked({})), 400, {
      error: 'BadRequest',
      message: "Body field 'locale' is required",
      code: 'request.validation',
    });
    expectResponse(await patchLocale(randomUUID(), admin, { locale: 'en' }), 404, USER_NOT_FOUND);
    expectResponse(await patchLocale(alice.id, bob.token, { locale: 'en' }), 403, forbidden('users:write'));
    expect((await auditOf(t, 'user_updated', alice.id)).at(-1)!.metadata).toEqual({ fields: ['preferred_locale'] });
  });

  it('sets avatar_url on the primary account; avatars_enabled=false removes every avatar and refuses new ones', async () => {
    const picture = 'https://img.example.org/a.png';
    expect((await patch(bob.id, bob.token, { avatar_url: picture })).status).toBe(200);
    expect((await t.as(bob.token).get(`/v1/users/${bob.id}/profile`).expect(200)).body.picture).toBe(picture);
    expectResponse(await patch(bob.id, bob.token, { avatar_url: 'javascript:alert(1)' }), 400, {
      error: 'BadRequest',
      message: 'avatar_url must be an http or https URL',
      code: 'user.invalid_url',
    });

    const off = await patch(bob.id, bob.token, { avatars_enabled: false }).expect(200);
    expect(off.body.data.avatars_enabled).toBe(false);
    const stored = await t.database.db
      .selectFrom('platform_accounts')
      .select('avatar_url')
      .where('user_id', '=', bob.id)
      .execute();
    expect(stored).toEqual([{ avatar_url: null }]);
    expect((await t.as(bob.token).get(`/v1/users/${bob.id}/profile`)).body).toMatchObject({
      picture: null,
      avatars_enabled: false,
    });
    expectResponse(await patch(bob.id, bob.token, { avatar_url: picture }), 400, {
      error: 'BadRequest',
      message: 'avatar_url cannot be set while avatars_enabled is false',
      code: 'user.avatars_disabled',
    });
    expect((await patch(bob.id, bob.token, { avatars_enabled: true, avatar_url: picture })).status).toBe(200);
    expect((await auditOf(t, 'user_updated', bob.id)).at(-1)!.metadata).toEqual({
      fields: ['avatars_enabled', 'avatar_url'],
    });
  });

  it("email in PATCH: administrators change another user's address directly; users must confirm their own", async () => {
    const carol = await createUser(t.app);
    expectResponse(await patch(carol.id, carol.token, { email: 'carol.new@example.org' }), 400, {
      error: 'BadRequest',
      message: `To change your own email, use POST /v1/users/${carol.id}/email/request-change: the new address must be confirmed first`,
      code: 'user.own_email_needs_confirmation',
    });
    expect((await patch(carol.id, admin, { email: 'Carol.New@Example.org' })).status).toBe(200);
    expect(await login(t.app, 'carol.new@example.org', carol.password)).toMatch(/^ses_/);
    await expect(login(t.app, `${carol.username}@example.org`, carol.password)).rejects.toThrow(/401/);
    expect((await auditOf(t, 'user_updated', carol.id)).at(-1)!.metadata).toEqual({ fields: ['email'] });

    const dave = await createUser(t.app);
    expectResponse(await patch(carol.id, admin, { email: `${dave.username}@example.org` }), 409, {
      error: 'Conflict',
      message: 'Email is already in use',
      code: 'user.email_in_use',
    });
    expectResponse(await patch(carol.id, admin, { email: 'not-an-address' }), 400, {
      error: 'BadRequest',
      message: 'email is not a valid email address',
      code: 'user.invalid_email',
    });
  });

  it('email in PATCH: the own-address rule holds however the id is spelled (upper case is the same user)', async () => {
    const erin = await createUser(t.app);
    const upper = erin.id.toUpperCase();
    expectResponse(await patch(upper, erin.token, { email: 'erin.moved@example.org' }), 400, {
      error: 'BadRequest',
      message: `To change your own email, use POST /v1/users/${erin.id}/email/request-change: the new address must be confirmed first`,
      code: 'user.own_email_needs_confirmation',
    });
    expect(await login(t.app, `${erin.username}@example.org`, erin.password)).toMatch(/^ses_/);
  });

  it('a users:write holder may not change the email of a user with permissions beyond their own', async () => {
    await createRoleWith(t.app, 'User Editors', ['users:read', 'users:write']);
    const editor = await createUser(t.app, ['role_user_editors']);
    const plain = await createUser(t.app);
    const denied = {
      error: 'Forbidden',
      message: 'You cannot manage the sign-in of a user who holds permissions you do not hold',
      code: 'user.sign_in_beyond_caller',
    };
    expectResponse(await patch(await adminIdOf(t), editor.token, { email: 'takeover@example.org' }), 403, denied);
    expectResponse(
      await t.as(editor.token).post(`/v1/users/${await adminIdOf(t)}/email/request-change`, {
        email: 'takeover@example.org',
      }),
      403,
      denied,
    );
    expect((await patch(plain.id, editor.token, { email: 'plain.moved@example.org' })).status).toBe(200);
  });
});

describe('deleting users', () => {
  let t: TestApp;
  let admin: string;

  beforeAll(async () => {
    t = await buildTestApp();
    admin = await login(t.app, TEST_ADMIN.username, TEST_ADMIN.password);
  });
  afterAll(() => t.close());

  it('soft-deletes: 204, the user disappears, their sessions and API keys stop working, user_deleted is recorded', async () => {
    const dev = await createUser(t.app, ['role_user', 'role_developer']);
    const secondSession = await login(t.app, dev.username, dev.password);
    const key = await createApiKey(t.app, dev.token, { name: 'doomed', scopes: ['api_keys:read'] });
    expect((await t.as(key.key).get('/v1/api-keys')).status).toBe(200);

    expectResponse(await t.as(admin).delete(`/v1/users/${dev.id}`), 204);
    for (const token of [dev.token, secondSession, key.key])
      expectResponse(await t.as(token).get('/v1/users/me'), 401, UNAUTHORIZED);
    expectResponse(await t.as(admin).get(`/v1/users/${dev.id}`), 404, USER_NOT_FOUND);
    expectResponse(await t.as(admin).get(`/v1/users/${dev.id}/profile`), 404, USER_NOT_FOUND);
    expect((await t.as(admin).get('/v1/users').expect(200)).body.data.map((u) => u.id)).not.toContain(dev.id);

    const row = await t.database.db
      .selectFrom('users')
      .select('deleted_at')
      .where('id', '=', dev.id)
      .executeTakeFirstOrThrow();
    expect(row.deleted_at).toBeInstanceOf(Date);
    const keyRow = await t.database.db
      .selectFrom('api_keys')
      .select('is_active')
      .where('id', '=', key.id)
      .executeTakeFirstOrThrow();
    expect(keyRow.is_active).toBe(false);
    const events = await auditOf(t, 'user_deleted', dev.id);
    expect(events.map((e) => [e.metadata, e.actor_id])).toEqual([
      [{ sessions_revoked: 2, api_keys_revoked: 1, scheduled_deletion_at: expect.any(String) }, await adminIdOf(t)],
    ]);

    // Gone means gone for every user endpoint, and the name stays reserved.
    expectResponse(await t.as(admin).delete(`/v1/users/${dev.id}`), 404, USER_NOT_FOUND);
    expectResponse(await t.as(admin).patch(`/v1/users/${dev.id}`, { privacy_mode: true }), 404, USER_NOT_FOUND);
    const other = await createUser(t.app);
    expectResponse(
      await t.as(other.token).patch(`/v1/users/${other.id}/username`, { username: dev.username }),
      409,
      USERNAME_TAKEN,
    );
  });

  it('needs users:delete (not even oneself without it); unknown users are 404', async () => {
    const user = await createUser(t.app);
    expectResponse(await t.as(user.token).delete(`/v1/users/${user.id}`), 403, forbidden('users:delete'));
    expectResponse(await t.as(null).delete(`/v1/users/${user.id}`), 401, UNAUTHORIZED);
    expectResponse(await t.as(admin).delete(`/v1/users/${randomUUID()}`), 404, USER_NOT_FOUND);
  });

  it('a deleted user is gone however the id is spelled, also after being read in upper case', async () => {
    const user = await createUser(t.app);
    const upper = user.id.toUpperCase();
    expect((await t.as(admin).get(`/v1/users/${upper}`).expect(200)).body.data.id).toBe(user.id);
    expectResponse(await t.as(admin).delete(`/v1/users/${user.id}`), 204);
    expectResponse(await t.as(admin).get(`/v1/users/${upper}`), 404, USER_NOT_FOUND);
    expectResponse(await t.as(admin).get(`/v1/users/${upper}/roles`), 404, USER_NOT_FOUND);
  });

  it('keeps the last super admin', async () => {
    const id = await adminIdOf(t);
    expectResponse(await t.as(admin).delete(`/v1/users/${id}`), 409, {
      error: 'Conflict',
      message: 'The last super admin cannot be deleted',
      code: 'user.last_super_admin',
    });
    const second = await createUser(t.app, ['role_admin']);
    expectResponse(await t.as(admin).delete(`/v1/users/${second.id}`), 204);
    expectResponse(await t.as(admin).delete(`/v1/users/${id}`), 409, {
      error: 'Conflict',
      message: 'The last super admin cannot be deleted',
      code: 'user.last_super_admin',
    });
    expectResponse(await t.as(admin).delete(`/v1/users/${id.toUpperCase()}`), 409, {
      error: 'Conflict',
      message: 'The last super admin cannot be deleted',
      code: 'user.last_super_admin',
    });
    expect((await t.as(admin).get('/v1/users/me')).status).toBe(200);
  });
});
