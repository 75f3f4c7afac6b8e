import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unchecked, type RequestBody } from '../../../test/client.js';
import { buildTestApp, createApiKey, createUser, login, type TestApp } from '../../../test/helpers.js';
import { SIGN_IN_POLICY } from '../sign-in-throttle/service.js';
import { PASSWORD_CHANGED_MESSAGE } from './service.js';

describe('POST /v1/users/me/password', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(() => t.close());

  const change = (token: string | null, body: RequestBody<'post', '/v1/users/me/password'>) =>
    t.as(token).post('/v1/users/me/password', body);
  const signIn = (identifier: string, password: string) => t.as(null).post('/v1/auth/login', { identifier, password });
  const works = async (token: string) => (await t.as(token).get('/v1/users/me')).status;

  it("sets the new password, keeps this session, ends the others and the provider's browser sessions, and records password_changed", async () => {
    const user = await createUser(t.app);
    const other = await login(t.app, user.username, user.password);
    // A sign-in on the OAuth provider's pages (its browser session), as oidc-provider stores it.
    const browserSession = randomUUID();
    await t.database.db
      .insertInto('oauth_artifacts')
      .values({
        model: 'Session',
        id: browserSession,
        payload: JSON.stringify({ accountId: user.id }),
        account_id: user.id,
      })
      .execute();

    const response = await change(user.token, {
      current_password: user.password,
      new_password: 'a brand new password',
    }).expect(200);
    expect(response.body).toEqual({ message: PASSWORD_CHANGED_MESSAGE, other_sessions_ended: 1 });

    expect(await works(user.token)).toBe(200);
    expect(await works(other)).toBe(401);
    expect(
      await t.database.db
        .selectFrom('oauth_artifacts')
        .select('id')
        .where('id', '=', browserSession)
        .executeTakeFirst(),
    ).toBeUndefined();
    await signIn(user.username, user.password).expect(401);
    await signIn(user.username, 'a brand new password').expect(200);
    const event = await t.database.db
      .selectFrom('audit_events')
      .selectAll()
      .where('user_id', '=', user.id)
      .where('event_type', '=', 'password_changed')
      .executeTakeFirstOrThrow();
    expect(event.metadata).toMatchObject({ via: 'change', sessions_revoked: 1 });
  });

  it('refuses a wrong current password (400) and a new one registration would refuse, and changes nothing', async () => {
    const user = await createUser(t.app);
    const wrong = await change(user.token, {
      current_password: 'not my password',
      new_password: 'a brand new password',
    }).expect(400);
    expect(wrong.body).toEqual({
      error: 'BadRequest',
      message: 'current_password is not the password of this account',
      code: 'password_change.wrong_current_password',
    });
    const short = await change(user.token, { current_password: user.password, new_password: 'short' });
    expect(short.body).toEqual({
      error: 'BadRequest',
      message: 'new_password must be at least 8 characters',
      code: 'user.password_too_short',
    });
    expect(JSON.stringify([wrong.body, short.body])).not.toContain('a brand new password');
    await signIn(user.username, user.password).expect(200);
    const failed = await t.database.db
      .selectFrom('audit_events')
      .selectAll()
      .where('user_id', '=', user.id)
      .where('event_type', '=', 'login_failed')
      .execute();
    expect(failed.map((event) => event.metadata)).toEqual([expect.objectContaining({ via: 'password_change' })]);
  });

  it('wrong current passwords count towards the sign-in lockout: the account is then locked for sign-in and change alike', async () => {
    const user = await createUser(t.app);
    for (let i = 0; i < SIGN_IN_POLICY.maxFailuresPerIdentifier; i++) {
      const guess = { current_password: `guess number ${i}`, new_password: 'a brand new password' };
      await change(user.token, guess).expect(400);
    }
    const locked = await change(user.token, {
      current_password: user.password,
      new_password: 'a brand new password',
    }).expect(429);
    expect(locked.body.code).toBe('sign_in.locked_out');
    await signIn(user.username, user.password).expect(429);
  });

  it('a session only: an API key gets 403 session.session_required before its body is read; no credential 401', async () => {
    const user = await createUser(t.app, ['role_user', 'role_developer']);
    const { key } = await createApiKey(t.app, user.token, { name: 'laptop', scopes: [] });
    const byKey = await change(key, unchecked({ nonsense: true })).expect(403);
    expect(byKey.body.code).toBe('session.session_required');
    await change(null, { current_password: user.password, new_password: 'a brand new password' }).expect(401);
  });

  it('an account signed in without a password (no email account) is told it has none', async () => {
    const user = await createUser(t.app);
    await t.database.db
      .updateTable('platform_accounts')
      .set({ password_hash: null })
      .where('user_id', '=', user.id)
      .execute();
    const response = await change(user.token, {
      current_password: 'anything at all',
      new_password: 'a brand new password',
    }).expect(400);
    expect(response.body.code).toBe('password_change.no_password');
  });

  describe('GraphQL changePassword', () => {
    const mutation =
      'mutation ($input: ChangePasswordInput!) { changePassword(input: $input) { message otherSessionsEnded } }';
    // (The document types `variables` as an empty record: any variables go unchecked.)
    const gql = async (token: string, input: Record<string, unknown>) =>
      (
        await t
          .as(token)
          .post('/v1/gql', { query: mutation, variables: unchecked({ input }) })
          .expect(200)
      ).body;

    it('changes the password as the REST route does; an API key is refused; a wrong password gives the same code', async () => {
      const user = await createUser(t.app, ['role_user', 'role_developer']);
      const other = await login(t.app, user.username, user.password);
      const { key } = await createApiKey(t.app, user.token, { name: 'script', scopes: [] });
      expect(
        (await gql(key, { currentPassword: user.password, newPassword: 'a brand new password' })).errors?.[0]
          ?.extensions?.code,
      ).toBe('session.session_required');
      expect(
        (await gql(user.token, { currentPassword: 'not my password', newPassword: 'a brand new password' })).errors?.[0]
          ?.extensions?.code,
      ).toBe('password_change.wrong_current_password');
      expect(
        (await gql(user.token, { currentPassword: user.password, newPassword: 'short' })).errors?.[0]?.extensions?.code,
      ).toBe('user.password_too_short');
      const done = await gql(user.token, { currentPassword: user.password, newPassword: 'a brand new password' });
      expect(done.data).toEqual({ changePassword: { message: PASSWORD_CHANGED_MESSAGE, otherSessionsEnded: 1 } });
      expect(await works(other)).toBe(401);
      await signIn(user.username, 'a brand new password').expect(200);
    });
  });
});
