import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unchecked, type RequestBody } from '../../../test/client.js';
import { buildTestApp, createApiKey, createUser, login, TEST_ADMIN, type TestApp } from '../../../test/helpers.js';
import { RECENT_SIGN_IN_MS } from '../sign-in/index.js';
import { ACCOUNT_DELETION_MESSAGE } from './service.js';

const GRACE_MS = 7 * 86_400_000;

describe('POST /v1/users/me/delete', () => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    t = await buildTestApp();
    t.clock.freeze();
    admin = await login(t.app, TEST_ADMIN.username, TEST_ADMIN.password);
  });
  afterAll(() => t.close());

  const deleteMe = (token: string, body?: RequestBody<'post', '/v1/users/me/delete'>) =>
    t.as(token).post('/v1/users/me/delete', body);
  const signIn = (identifier: string, password: string) => t.as(null).post('/v1/auth/login', { identifier, password });
  const works = async (token: string) => (await t.as(token).get('/v1/users/me')).status;

  it('deletes the account as an administrator would: every session and key ends, sign-in fails, an admin can restore it', async () => {
    const user = await createUser(t.app, ['role_user', 'role_developer']);
    const other = await login(t.app, user.username, user.password);
    const { key } = await createApiKey(t.app, user.token, { name: 'laptop', scopes: [] });

    const response = await deleteMe(user.token, { current_password: user.password }).expect(200);
    expect(response.body).toEqual({
      message: ACCOUNT_DELETION_MESSAGE,
      scheduled_deletion_at: new Date(t.clock.nowMs() + GRACE_MS).toISOString(),
    });
    expect([await works(user.token), await works(other), await works(key)]).toEqual([401, 401, 401]);
    await signIn(user.username, user.password).expect(401);
    const event = await t.database.db
      .selectFrom('audit_events')
      .selectAll()
      .where('user_id', '=', user.id)
      .where('event_type', '=', 'user_deleted')
      .executeTakeFirstOrThrow();
    expect({ actor: event.actor_id, metadata: event.metadata }).toEqual({
      actor: user.id,
      metadata: {
        sessions_revoked: 2,
        api_keys_revoked: 1,
        scheduled_deletion_at: new Date(t.clock.nowMs() + GRACE_MS).toISOString(),
      },
    });

    await t.as(admin).post(`/v1/admin/users/${user.id}/cancel-deletion`).expect(200);
    await signIn(user.username, user.password).expect(200);
  });

  it('refuses a wrong or missing current password (400) as the password change does, and deletes nothing', async () => {
    const user = await createUser(t.app);
    const wrong = await deleteMe(user.token, { current_password: 'not my password' });
    expect({ status: wrong.status, body: wrong.body }).toEqual({
      status: 400,
      body: {
        error: 'BadRequest',
        message: 'current_password is not the password of this account',
        code: 'password_change.wrong_current_password',
      },
    });
    const missing = await deleteMe(user.token);
    expect({ status: missing.status, body: missing.body }).toEqual({
      status: 400,
      body: {
        error: 'BadRequest',
        message: 'current_password is required: this account has a password',
        code: 'account_deletion.current_password_required',
      },
    });
    expect(await works(user.token)).toBe(200);
    const failed = await t.database.db
      .selectFrom('audit_events')
      .select('metadata')
      .where('user_id', '=', user.id)
      .where('event_type', '=', 'login_failed')
      .execute();
    expect(failed.map((event) => event.metadata)).toEqual([expect.objectContaining({ via: 'account_deletion' })]);
  });

  it('a session only: an API key gets 403 session.session_required before its body is read', async () => {
    const user = await createUser(t.app, ['role_user', 'role_developer']);
    const { key } = await createApiKey(t.app, user.token, { name: 'script', scopes: [] });
    const byKey = await deleteMe(key, unchecked({ nonsense: true })).expect(403);
    expect(byKey.body.code).toBe('session.session_required');
    expect(await works(user.token)).toBe(200);
  });

  it('the last super admin cannot delete themselves (409)', async () => {
    const refused = await deleteMe(admin, { current_password: TEST_ADMIN.password }).expect(409);
    expect(refused.body.code).toBe('user.last_super_admin');
    expect(await works(admin)).toBe(200);
  });

  it('an account without a password needs a sign-in of the last 15 minutes', async () => {
    const user = await createUser(t.app);
    await t.database.db
      .updateTable('platform_accounts')
      .set({ password_hash: null })
      .where('user_id', '=', user.id)
      .execute();
    t.clock.advance(RECENT_SIGN_IN_MS + 1000);
    const stale = await deleteMe(user.token).expect(403);
    expect(stale.body.code).toBe('account_deletion.sign_in_again');

    const fresh = await createUser(t.app);
    await t.database.db
      .updateTable('platform_accounts')
      .set({ password_hash: null })
      .where('user_id', '=', fresh.id)
      .execute();
    await deleteMe(fresh.token).expect(200);
    expect(await works(fresh.token)).toBe(401);
  });

  it('GraphQL deleteMyAccount deletes as the route does; an API key is refused', async () => {
    const user = await createUser(t.app, ['role_user', 'role_developer']);
    const { key } = await createApiKey(t.app, user.token, { name: 'script', scopes: [] });
    const mutation =
      'mutation ($input: DeleteMyAccountInput) { deleteMyAccount(input: $input) { message scheduledDeletionAt } }';
    // (The document types `variables` as an empty record: any variables go unchecked.)
    const gql = async (token: string, input: Record<string, unknown>) =>
      (
        await t
          .as(token)
          .post('/v1/gql', { query: mutation, variables: unchecked({ input }) })
          .expect(200)
      ).body;
    expect((await gql(key, { currentPassword: user.password })).errors?.[0]?.extensions?.code).toBe(
      'session.session_required',
    );
    expect((await gql(user.token, { currentPassword: 'not my password' })).errors?.[0]?.extensions?.code).toBe(
      'password_change.wrong_current_password',
    );
    expect((await gql(user.token, { currentPassword: user.password })).data).toEqual({
      deleteMyAccount: {
        message: ACCOUNT_DELETION_MESSAGE,
        scheduledDeletionAt: new Date(t.clock.nowMs() + GRACE_MS).toISOString(),
      },
    });
    expect(await works(user.token)).toBe(401);
  });
});
