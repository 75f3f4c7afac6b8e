import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unchecked, type RequestBody } from '../../../test/client.js';
import {
  adminIdOf,
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

const ban = (userId: string, body: RequestBody<'post', '/v1/users/{id}/ban'> = {}, token = admin) =>
  t.as(token).post(`/v1/users/${userId}/ban`, body);
const signIn = (user: { username: string; password: string }, password = user.password) =>
  t.as(null).post('/v1/auth/login', { identifier: user.username, password });
const me = (token: string) => t.as(token).get('/v1/users/me');
const gps = (token: string) => t.as(token).get('/v1/gps');
const banStatus = (userId: string, token = admin) => t.as(token).get(`/v1/users/${userId}/ban`);
const banHistory = (userId: string, token = admin) => t.as(token).get(`/v1/users/${userId}/bans`);
const unban = (userId: string, token = admin) => t.as(token).delete(`/v1/users/${userId}/ban`);

/** A user with a session and an API key of their own, both working. */
async function userWithKey() {
  const user = await createUser(t.app, ['role_user', 'role_api_read_only', 'role_developer']);
  const key = (await createApiKey(t.app, user.token, { name: 'own key', scopes: ['gps:read'] })).key;
  await gps(key).expect(200);
  return { ...user, key };
}

describe('POST /v1/users/{id}/ban', () => {
  it('bans permanently: sessions end, API keys are refused, signing in answers 403 naming the ban', async () => {
    const user = await userWithKey();
    const openApp = await socketAs(base, user.key);
    const response = await ban(user.id, { reason: 'spam' }).expect(200);
    expect(response.body).toEqual({
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

    expect((await me(user.token)).body).toEqual(UNAUTHORIZED);
    expect((await gps(user.key)).body).toEqual(UNAUTHORIZED);
    // Open apps of the user are told, then disconnected.
    expect(await openApp.next('forceLogout')).toEqual({ type: 'forceLogout', reason: 'banned' });
    expect((await openApp.closed).code).toBe(4001);
    const refused = await signIn(user);
    expect({ status: refused.status, body: refused.body }).toEqual({
      status: 403,
      body: { error: 'Forbidden', message: 'This account is banned permanently: spam', code: 'auth.banned' },
    });
    // A wrong password says nothing about the ban.
    await signIn(user, 'wrong-password-123').expect(401);

    const status = await banStatus(user.id);
    expect(status.body).toEqual({ is_banned: true, active_ban: response.body.data });
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
      resource_id: response.body.data.id,
      metadata: { reason: 'spam', expires_at: null, sessions_revoked: 1 },
    });
  });

  it('with duration_seconds ends by itself: no sign-in until then, everything works after', async () => {
    const user = await userWithKey();
    const response = await ban(user.id, { duration_seconds: 3600 }).expect(200);
    const end = new Date(t.clock.nowMs() + 3_600_000).toISOString();
    expect(response.body.data).toMatchObject({ reason: null, expires_at: end, is_permanent: false });
    expect((await signIn(user)).body).toEqual({
      error: 'Forbidden',
      message: `This account is banned until ${end}`,
      code: 'auth.banned',
    });

    t.clock.advance(3_600_001);
    expect((await banStatus(user.id)).body).toEqual({
      is_banned: false,
      active_ban: null,
    });
    await gps(user.key).expect(200);
    const session = await signIn(user).expect(200);
    await me(session.body.session_token!).expect(200);
    // An expired ban is history, not in force: a new one may start.
    await ban(user.id, { duration_seconds: 60 }).expect(200);
  });

  it('refuses every other way of starting a session while the ban lasts', async () => {
    const user = await createUser(t.app);
    await ban(user.id);
    const appSession = await t
      .as(TEST_SYSTEM_KEY)
      .post(
        '/v1/sessions',
        { userId: user.id, expires: new Date(t.clock.nowMs() + 86_400_000).toISOString() },
        { headers: { 'x-source-service': 'id' } },
      )
      .expect(403);
    expect(appSession.body).toMatchObject({ code: 'auth.banned' });
  });

  it('refuses banning yourself, a banned user again, an unknown user and a bad duration', async () => {
    const user = await createUser(t.app);
    expect((await ban(adminId)).body).toEqual({
      error: 'BadRequest',
      message: 'You cannot ban yourself',
      code: 'ban.self',
    });
    await ban(user.id).expect(200);
    const again = await ban(user.id, { duration_seconds: 10 });
    expect({ status: again.status, body: again.body }).toMatchObject({
      status: 409,
      body: { code: 'ban.already_banned' },
    });
    expect((await ban(UNKNOWN_ID)).body).toEqual({
      error: 'NotFound',
      message: 'User not found',
      code: 'ban.user_not_found',
    });
    for (const duration_seconds of [0, -5, 1.5, 'long']) {
      const bad = await ban(user.id, unchecked({ duration_seconds })).expect(400);
      expect(bad.body.message).toContain('duration_seconds');
    }
  });

  it('refuses banning yourself however your id is spelled (upper case names the same user)', async () => {
    const banners = await createRoleWith(t.app, 'Self Banners', ['users:ban']);
    const user = await createUser(t.app, ['role_user', banners]);
    expect((await ban(user.id.toUpperCase(), {}, user.token)).body).toEqual({
      error: 'BadRequest',
      message: 'You cannot ban yourself',
      code: 'ban.self',
    });
    await me(user.token).expect(200);
  });

  it('lets only a super admin ban a super admin, and nobody a user holding more than they do', async () => {
    const moderatorRole = await createRoleWith(t.app, 'Moderator', ['users:read', 'users:ban']);
    const moderator = await createUser(t.app, [moderatorRole]);
    const superAdmin = await createUser(t.app, ['role_admin']);
    expect((await ban(superAdmin.id, {}, moderator.token)).body).toEqual({
      error: 'Forbidden',
      message: 'Only a super admin can ban a super admin',
      code: 'ban.super_admin',
    });
    const writer = await createUser(t.app, [await createRoleWith(t.app, 'Writer', ['users:write'])]);
    expect((await ban(writer.id, {}, moderator.token)).body).toMatchObject({ code: 'user.sign_in_beyond_caller' });
    const plain = await createUser(t.app);
    await ban(plain.id, {}, moderator.token).expect(200);
    await ban(superAdmin.id).expect(200);
  });

  it('needs users:ban', async () => {
    const user = await createUser(t.app);
    const reader = await createUser(t.app, [await createRoleWith(t.app, 'Reader', ['users:read'])]);
    await ban(user.id, {}, reader.token).expect(403);
    await unban(user.id, reader.token).expect(403);
    await t.as(null).post(`/v1/users/${user.id}/ban`).expect(401);
  });
});

describe('DELETE /v1/users/{id}/ban and GET /v1/users/{id}/bans', () => {
  it('lifts the ban at once (keys refused during it work again) and keeps it in the history', async () => {
    const user = await userWithKey();
    const first = (await ban(user.id, { reason: 'first', duration_seconds: 60 }).expect(200)).body.data;
    t.clock.advance(61_000);
    const second = (await ban(user.id, { reason: 'second' }).expect(200)).body.data;
    await gps(user.key).expect(401);

    const lifted = await unban(user.id);
    expect({ status: lifted.status, body: lifted.body }).toEqual({
      status: 200,
      body: { success: true, message: 'User unbanned' },
    });
    await gps(user.key).expect(200);
    await signIn(user).expect(200);

    const history = await banHistory(user.id);
    expect(history.body).toEqual({
      data: [
        { ...second, unbanned_at: new Date(t.clock.nowMs()).toISOString(), unbanned_by: adminId },
        { ...first, unbanned_at: null, unbanned_by: null },
      ],
    });
    const again = await unban(user.id);
    expect({ status: again.status, body: again.body }).toEqual({
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
    expect((await banStatus(user.id, user.token)).body).toEqual({
      is_banned: false,
      active_ban: null,
    });
    const other = await createUser(t.app);
    await banStatus(other.id, user.token).expect(403);
    await banHistory(user.id, user.token).expect(403);
    expect((await banHistory(UNKNOWN_ID)).body).toMatchObject({
      code: 'ban.user_not_found',
    });
  });

  it('is_banned of the flat user shape follows the ban', async () => {
    const user = await createUser(t.app);
    const lookup = async () =>
      (await t.as(TEST_SYSTEM_KEY).get(`/v1/users/email/${user.username}@example.org`).expect(200)).body;
    expect((await lookup()).data.is_banned).toBe(false);
    await ban(user.id, { duration_seconds: 5 });
    expect((await lookup()).data.is_banned).toBe(true);
    t.clock.advance(5_001);
    expect((await lookup()).data.is_banned).toBe(false);
  });
});
