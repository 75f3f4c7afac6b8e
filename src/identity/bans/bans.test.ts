import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adminIdOf,
  bearer,
  buildTestApp,
  createApiKey,
  createRoleWith,
  createUser,
  login,
  TEST_ADMIN,
  TEST_SYSTEM_KEY,
  UNAUTHORIZED,
  UNKNOWN_ID,
  type TestApp,
} from '../../../test/helpers.js';
import { socketAs } from '../../../test/ws-client.js';

let t: TestApp;
let admin: string;
let adminId: string;
beforeAll(async () => {
  t = await buildTestApp();
  // Stamps are compared exactly; time moves only when a test moves it.
  t.clock.freeze();
  admin = await login(t.app, 'admin', TEST_ADMIN.password);
  adminId = await adminIdOf(t);
});
afterAll(() => t.close());

let base: string;
beforeAll(async () => {
  base = await t.app.listen({ host: '127.0.0.1', port: 0 });
});

const call = (method: 'GET' | 'POST' | 'DELETE', url: string, token: string, payload?: object) =>
  t.app.inject({ method, url, headers: bearer(token), ...(payload ? { payload } : {}) });
const ban = (userId: string, payload: object = {}, token = admin) =>
  call('POST', `/v1/users/${userId}/ban`, token, payload);
const signIn = (user: { username: string; password: string }, password = user.password) =>
  t.app.inject({ method: 'POST', url: '/v1/auth/login', payload: { identifier: user.username, password } });
const me = (token: string) => call('GET', '/v1/users/me', token);

/** A user with a session and an API key of their own, both working. */
async function userWithKey() {
  const user = await createUser(t.app, ['role_user', 'role_api_read_only', 'role_developer']);
  const key = (await createApiKey(t.app, user.token, { name: 'own key', scopes: ['gps:read'] })).key;
  expect((await call('GET', '/v1/gps', key)).statusCode).toBe(200);
  return { ...user, key };
}

describe('POST /v1/users/{id}/ban', () => {
  it('bans permanently: sessions end, API keys are refused, signing in answers 403 naming the ban', async () => {
    const user = await userWithKey();
    const openApp = await socketAs(base, user.key);
    const response = await ban(user.id, { reason: 'spam' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      data: {
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        user_id: user.id,
        reason: 'spam',
        banned_by: adminId,
        banned_at: new Date(t.clock.nowMs()).toISOString(),
        expires_at: null,
        is_permanent: true,
      },
    });

    expect((await me(user.token)).json()).toEqual(UNAUTHORIZED);
    expect((await call('GET', '/v1/gps', user.key)).json()).toEqual(UNAUTHORIZED);
    // Open apps of the user are told, then disconnected.
    expect(await openApp.next('forceLogout')).toEqual({ type: 'forceLogout', reason: 'banned' });
    expect((await openApp.closed).code).toBe(4001);
    const refused = await signIn(user);
    expect({ status: refused.statusCode, body: refused.json() }).toEqual({
      status: 403,
      body: { error: 'Forbidden', message: 'This account is banned permanently: spam', code: 'auth.banned' },
    });
    // A wrong password says nothing about the ban.
    expect((await signIn(user, 'wrong-password-123')).statusCode).toBe(401);

    const status = await call('GET', `/v1/users/${user.id}/ban`, admin);
    expect(status.json()).toEqual({ is_banned: true, active_ban: response.json().data });
    const events = await t.database.db
      .selectFrom('audit_events')
      .selectAll()
      .where('user_id', '=', user.id)
      .where('event_type', 'in', ['user_banned', 'login_failed'])
      .orderBy('created_at')
      .execute();
    expect(events.map((e) => [e.event_type, e.status, e.error_message])).toEqual([
      ['user_banned', 'success', null],
      ['login_failed', 'failure', 'banned'],
      ['login_failed', 'failure', 'wrong password'],
    ]);
    expect(events[0]).toMatchObject({
      actor_id: adminId,
      resource_type: 'ban',
      resource_id: response.json().data.id,
      metadata: { reason: 'spam', expires_at: null, sessions_revoked: 1 },
    });
  });

  it('with duration_seconds ends by itself: no sign-in until then, everything works after', async () => {
    const user = await userWithKey();
    const response = await ban(user.id, { duration_seconds: 3600 });
    const end = new Date(t.clock.nowMs() + 3_600_000).toISOString();
    expect(response.json().data).toMatchObject({ reason: null, expires_at: end, is_permanent: false });
    expect((await signIn(user)).json()).toEqual({
      error: 'Forbidden',
      message: `This account is banned until ${end}`,
      code: 'auth.banned',
    });

    t.clock.advance(3_600_001);
    expect((await call('GET', `/v1/users/${user.id}/ban`, admin)).json()).toEqual({
      is_banned: false,
      active_ban: null,
    });
    expect((await call('GET', '/v1/gps', user.key)).statusCode).toBe(200);
    const session = await signIn(user);
    expect(session.statusCode).toBe(200);
    expect((await me(session.json().session_token)).statusCode).toBe(200);
    // An expired ban is history, not in force: a new one may start.
    expect((await ban(user.id, { duration_seconds: 60 })).statusCode).toBe(200);
  });

  it('refuses every other way of starting a session while the ban lasts', async () => {
    const user = await createUser(t.app);
    await ban(user.id);
    const appSession = await t.app.inject({
      method: 'POST',
      url: '/v1/sessions',
      headers: { ...bearer(TEST_SYSTEM_KEY), 'x-source-service': 'id' },
      payload: { userId: user.id, expires: new Date(t.clock.nowMs() + 86_400_000).toISOString() },
    });
    expect(appSession.statusCode).toBe(403);
    expect(appSession.json()).toMatchObject({ code: 'auth.banned' });
  });

  it('refuses banning yourself, a banned user again, an unknown user and a bad duration', async () => {
    const user = await createUser(t.app);
    expect((await ban(adminId)).json()).toEqual({
      error: 'BadRequest',
      message: 'You cannot ban yourself',
      code: 'ban.self',
    });
    expect((await ban(user.id)).statusCode).toBe(200);
    const again = await ban(user.id, { duration_seconds: 10 });
    expect({ status: again.statusCode, code: again.json().code }).toEqual({ status: 409, code: 'ban.already_banned' });
    expect((await ban(UNKNOWN_ID)).json()).toEqual({
      error: 'NotFound',
      message: 'User not found',
      code: 'ban.user_not_found',
    });
    for (const duration_seconds of [0, -5, 1.5, 'long']) {
      const bad = await ban(user.id, { duration_seconds });
      expect(bad.statusCode).toBe(400);
      expect(bad.json().message).toContain('duration_seconds');
    }
  });

  it('refuses banning yourself however your id is spelled (upper case names the same user)', async () => {
    const banners = await createRoleWith(t.app, 'Self Banners', ['users:ban']);
    const user = await createUser(t.app, ['role_user', banners]);
    expect((await ban(user.id.toUpperCase(), {}, user.token)).json()).toEqual({
      error: 'BadRequest',
      message: 'You cannot ban yourself',
      code: 'ban.self',
    });
    expect((await me(user.token)).statusCode).toBe(200);
  });

  it('lets only a super admin ban a super admin, and nobody a user holding more than they do', async () => {
    const moderatorRole = await createRoleWith(t.app, 'Moderator', ['users:read', 'users:ban']);
    const moderator = await createUser(t.app, [moderatorRole]);
    const superAdmin = await createUser(t.app, ['role_admin']);
    expect((await ban(superAdmin.id, {}, moderator.token)).json()).toEqual({
      error: 'Forbidden',
      message: 'Only a super admin can ban a super admin',
      code: 'ban.super_admin',
    });
    const writer = await createUser(t.app, [await createRoleWith(t.app, 'Writer', ['users:write'])]);
    expect((await ban(writer.id, {}, moderator.token)).json()).toMatchObject({ code: 'user.sign_in_beyond_caller' });
    const plain = await createUser(t.app);
    expect((await ban(plain.id, {}, moderator.token)).statusCode).toBe(200);
    expect((await ban(superAdmin.id)).statusCode).toBe(200);
  });

  it('needs users:ban', async () => {
    const user = await createUser(t.app);
    const reader = await createUser(t.app, [await createRoleWith(t.app, 'Reader', ['users:read'])]);
    expect((await ban(user.id, {}, reader.token)).statusCode).toBe(403);
    expect((await call('DELETE', `/v1/users/${user.id}/ban`, reader.token)).statusCode).toBe(403);
    expect((await t.app.inject({ method: 'POST', url: `/v1/users/${user.id}/ban` })).statusCode).toBe(401);
  });
});

describe('DELETE /v1/users/{id}/ban and GET /v1/users/{id}/bans', () => {
  it('lifts the ban at once (keys refused during it work again) and keeps it in the history', async () => {
    const user = await userWithKey();
    const first = (await ban(user.id, { reason: 'first', duration_seconds: 60 })).json().data;
    t.clock.advance(61_000);
    const second = (await ban(user.id, { reason: 'second' })).json().data;
    expect((await call('GET', '/v1/gps', user.key)).statusCode).toBe(401);

    const lifted = await call('DELETE', `/v1/users/${user.id}/ban`, admin);
    expect({ status: lifted.statusCode, body: lifted.json() }).toEqual({
      status: 200,
      body: { success: true, message: 'User unbanned' },
    });
    expect((await call('GET', '/v1/gps', user.key)).statusCode).toBe(200);
    expect((await signIn(user)).statusCode).toBe(200);

    const history = await call('GET', `/v1/users/${user.id}/bans`, admin);
    expect(history.json()).toEqual({
      data: [
        { ...second, unbanned_at: new Date(t.clock.nowMs()).toISOString(), unbanned_by: adminId },
        { ...first, unbanned_at: null, unbanned_by: null },
      ],
    });
    const again = await call('DELETE', `/v1/users/${user.id}/ban`, admin);
    expect({ status: again.statusCode, body: again.json() }).toEqual({
      status: 404,
      body: { error: 'NotFound', message: 'The user is not banned', code: 'ban.not_banned' },
    });
    const audited = await t.database.db
      .selectFrom('audit_events')
      .select(['actor_id', 'resource_id'])
      .where('event_type', '=', 'user_unbanned')
      .where('user_id', '=', user.id)
      .execute();
    expect(audited).toEqual([{ actor_id: adminId, resource_id: second.id }]);
  });

  it('shows a user their own ban status; the history needs users:read', async () => {
    const user = await createUser(t.app);
    expect((await call('GET', `/v1/users/${user.id}/ban`, user.token)).json()).toEqual({
      is_banned: false,
      active_ban: null,
    });
    const other = await createUser(t.app);
    expect((await call('GET', `/v1/users/${other.id}/ban`, user.token)).statusCode).toBe(403);
    expect((await call('GET', `/v1/users/${user.id}/bans`, user.token)).statusCode).toBe(403);
    expect((await call('GET', `/v1/users/${UNKNOWN_ID}/bans`, admin)).json()).toMatchObject({
      code: 'ban.user_not_found',
    });
  });

  it('is_banned of the flat user shape follows the ban', async () => {
    const user = await createUser(t.app);
    const lookup = () => call('GET', `/v1/users/email/${user.username}@example.org`, TEST_SYSTEM_KEY);
    expect((await lookup()).json().data.is_banned).toBe(false);
    await ban(user.id, { duration_seconds: 5 });
    expect((await lookup()).json().data.is_banned).toBe(true);
    t.clock.advance(5_001);
    expect((await lookup()).json().data.is_banned).toBe(false);
  });
});
