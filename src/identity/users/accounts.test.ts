import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unchecked } from '../../../test/client.js';
import { tokenFromMail, type FakeSmtp } from '../../../test/fakes/smtp.js';
import {
  buildMailingTestApp,
  buildTestApp,
  createUser,
  expectExpiresIn,
  login,
  TEST_ADMIN,
  type TestApp,
} from '../../../test/helpers.js';
import { hashToken, newToken, SESSION_TOKEN_PREFIX } from '../../platform/auth/tokens.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MISSING = '00000000-0000-4000-8000-000000000000';

describe('platform accounts and email linking', () => {
  let t: TestApp;
  let smtp: FakeSmtp;
  let admin: string;
  let counter = 0;

  beforeAll(async () => {
    ({ t, smtp } = await buildMailingTestApp());
    admin = await login(t.app, 'admin', TEST_ADMIN.password);
    // Shipped disabled; the tests sign in through them.
    await t.database.db
      .updateTable('platforms')
      .set({ enabled: true })
      .where('slug', 'in', ['github', 'discord'])
      .execute();
  });
  afterAll(() => t.close());

  /** Links an OAuth account directly (the OAuth sign-in is another area's); optionally makes it primary. */
  async function addOAuthAccount(userId: string, slug: string, primary = false) {
    const db = t.database.db;
    const platform = await db.selectFrom('platforms').select('id').where('slug', '=', slug).executeTakeFirstOrThrow();
    const account = await db
      .insertInto('platform_accounts')
      .values({
        user_id: userId,
        platform_id: platform.id,
        platform_user_id: `${slug}-${++counter}`,
        username: `${slug}_name`,
        avatar_url: 'https://cdn.test/a.png',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    if (primary)
      await db.updateTable('users').set({ primary_platform_account_id: account.id }).where('id', '=', userId).execute();
    return account.id;
  }

  /** A user who signed up through an OAuth provider only (no email account), with a session. */
  async function createOAuthUser(...slugs: string[]) {
    const db = t.database.db;
    const user = await db
      .insertInto('users')
      .values({ username: `oauth_${process.pid}_${++counter}` })
      .returning(['id', 'username'])
      .executeTakeFirstOrThrow();
    const accountIds: string[] = [];
    for (const [i, slug] of (slugs.length ? slugs : ['github']).entries())
      accountIds.push(await addOAuthAccount(user.id, slug, i === 0));
    const token = newToken(SESSION_TOKEN_PREFIX);
    await db
      .insertInto('sessions')
      .values({
        token_hash: hashToken(token),
        user_id: user.id,
        provider: slugs[0] ?? 'github',
        expires_at: new Date(Date.now() + 3_600_000),
      })
      .execute();
    return { ...user, token, accountIds };
  }

  const requestLink = (userId: string, token: string, email: string, password = 'linked-password-1') =>
    t.as(token).post(`/v1/users/${userId}/email-link/request`, { email, password });
  const verify = (token: string, linkToken: string) =>
    t.as(token).post('/v1/users/email-link/verify', { token: linkToken });
  const events = (eventType: string, resourceId: string) =>
    t.database.db
      .selectFrom('audit_events')
      .selectAll()
      .where('event_type', '=', eventType)
      .where('resource_id', '=', resourceId)
      .execute();

  describe('GET /v1/users/{id}/accounts', () => {
    it('lists the own accounts in the platform account shape', async () => {
      const user = await createUser(t.app);
      const response = await t.as(user.token).get(`/v1/users/${user.id}/accounts`).expect(200);
      expect(response.body).toEqual({
        data: [
          {
            id: expect.stringMatching(UUID),
            platform_id: expect.stringMatching(UUID),
            platform_name: 'Email',
            platform_slug: 'email',
            platform_user_id: `${user.username}@example.org`,
            is_oauth: false,
            is_primary: true,
            username: user.username,
            email: `${user.username}@example.org`,
            avatar_url: null,
            created_at: expect.any(String),
            updated_at: expect.any(String),
          },
        ],
        _links: { self: `http://localhost/v1/users/${user.id}/accounts` },
      });
    });

    it('needs users:read for another user; 404 for an unknown user; 401 without credentials', async () => {
      const [user, other] = [await createUser(t.app), await createUser(t.app)];
      expect((await t.as(other.token).get(`/v1/users/${user.id}/accounts`)).status).toBe(403);
      const asAdmin = await t.as(admin).get(`/v1/users/${user.id}/accounts`).expect(200);
      expect(asAdmin.body.data).toHaveLength(1);
      const unknown = await t.as(admin).get(`/v1/users/${MISSING}/accounts`).expect(404);
      expect(unknown.body).toEqual({ error: 'NotFound', message: 'User not found', code: 'user.not_found' });
      expect((await t.as(null).get(`/v1/users/${user.id}/accounts`)).status).toBe(401);
    });
  });

  describe('PUT /v1/users/{id}/accounts/{account_id}/primary', () => {
    it('makes another account primary and audits it', async () => {
      const user = await createUser(t.app);
      const github = await addOAuthAccount(user.id, 'github');
      const response = await t.as(user.token).put(`/v1/users/${user.id}/accounts/${github}/primary`).expect(200);
      expect(response.body).toEqual({
        data: expect.objectContaining({
          id: github,
          platform_slug: 'github',
          platform_name: 'GitHub',
          is_oauth: true,
          is_primary: true,
          avatar_url: 'https://cdn.test/a.png',
        }),
        _links: { self: `http://localhost/v1/users/${user.id}/accounts/${github}/primary` },
      });
      const list = (await t.as(user.token).get(`/v1/users/${user.id}/accounts`).expect(200)).body.data;
      expect(list.map((a: { platform_slug: string; is_primary: boolean }) => [a.platform_slug, a.is_primary])).toEqual([
        ['email', false],
        ['github', true],
      ]);
      const [event] = await events('user_updated', user.id);
      expect(event?.metadata).toMatchObject({
        field: 'primary_platform_account_id',
        new_value: github,
        platform: 'github',
      });
      // Asking again changes nothing and still answers the account.
      expect(
        (await t.as(user.token).put(`/v1/users/${user.id}/accounts/${github}/primary`).expect(200)).body.data
          .is_primary,
      ).toBe(true);
      expect(await events('user_updated', user.id)).toHaveLength(1);
    });

    it('answers 404 for an unknown user, an unknown account and an account of another user', async () => {
      const [user, other] = [await createUser(t.app), await createOAuthUser()];
      const cases: [`/v1/users/${string}/accounts/${string}/primary`, string, string][] = [
        [`/v1/users/${MISSING}/accounts/${other.accountIds[0]}/primary`, 'User not found', 'user.not_found'],
        [`/v1/users/${user.id}/accounts/${MISSING}/primary`, 'Platform account not found', 'account.not_found'],
        [
          `/v1/users/${user.id}/accounts/${other.accountIds[0]}/primary`,
          'Platform account not found',
          'account.not_found',
        ],
      ];
      for (const [url, message, code] of cases) {
        const response = await t.as(admin).put(url).expect(404);
        expect(response.body).toEqual({ error: 'NotFound', message, code });
      }
    });

    it('needs users:write for another user', async () => {
      const [user, other] = [await createOAuthUser('github', 'discord'), await createUser(t.app)];
      const url = `/v1/users/${user.id}/accounts/${user.accountIds[1]!}/primary` as const;
      expect((await t.as(other.token).put(url)).status).toBe(403);
      expect((await t.as(admin).put(url)).status).toBe(200);
    });
  });

  describe('DELETE /v1/users/{id}/accounts/{account_id}', () => {
    it('refuses the email account', async () => {
      const user = await createUser(t.app);
      await addOAuthAccount(user.id, 'github');
      const [email] = (await t.as(user.token).get(`/v1/users/${user.id}/accounts`).expect(200)).body.data;
      const response = await t.as(user.token).delete(`/v1/users/${user.id}/accounts/${email!.id}`).expect(400);
      expect(response.body).toEqual({
        error: 'BadRequest',
        message: 'The email account cannot be unlinked',
        code: 'account.unlink_email',
      });
    });

    it('refuses the last remaining account', async () => {
      const user = await createOAuthUser('github');
      const response = await t.as(user.token).delete(`/v1/users/${user.id}/accounts/${user.accountIds[0]}`).expect(400);
      expect(response.body).toEqual({
        error: 'BadRequest',
        message: 'The last remaining account cannot be unlinked',
        code: 'account.unlink_last',
      });
    });

    it('refuses the primary account', async () => {
      const user = await createOAuthUser('github', 'discord');
      const response = await t.as(user.token).delete(`/v1/users/${user.id}/accounts/${user.accountIds[0]}`).expect(400);
      expect(response.body).toEqual({
        error: 'BadRequest',
        message: 'The primary account cannot be unlinked; make another account primary first',
        code: 'account.unlink_primary',
      });
    });

    it('unlinks another account: 204, gone from the list, account_unlinked audited', async () => {
      const user = await createOAuthUser('github', 'discord');
      const [, discord] = user.accountIds;
      const response = await t.as(user.token).delete(`/v1/users/${user.id}/accounts/${discord}`).expect(204);
      expect(response.body).toBe('');
      const list = (await t.as(user.token).get(`/v1/users/${user.id}/accounts`).expect(200)).body.data;
      expect(list.map((a: { id: string }) => a.id)).toEqual([user.accountIds[0]]);
      const [event] = await events('account_unlinked', discord!);
      expect(event).toMatchObject({
        user_id: user.id,
        actor_id: user.id,
        resource_type: 'platform_account',
        metadata: { platform: 'discord' },
      });
      expect((await t.as(user.token).delete(`/v1/users/${user.id}/accounts/${discord}`)).status).toBe(404);
    });

    it('answers 404 for an account of another user and 403 without users:write', async () => {
      const [user, other] = [await createOAuthUser('github', 'discord'), await createOAuthUser('github', 'discord')];
      const foreign = await t.as(admin).delete(`/v1/users/${user.id}/accounts/${other.accountIds[1]}`).expect(404);
      expect(foreign.body).toEqual({
        error: 'NotFound',
        message: 'Platform account not found',
        code: 'account.not_found',
      });
      expect((await t.as(other.token).delete(`/v1/users/${user.id}/accounts/${user.accountIds[1]}`)).status).toBe(403);
      expect((await t.as(admin).delete(`/v1/users/${user.id}/accounts/${user.accountIds[1]}`)).status).toBe(204);
    });
  });

  describe('email link', () => {
    it('request, mail, follow the link: the email account exists and signs in', async () => {
      const user = await createOAuthUser('github');
      const address = `link_${counter}@example.org`;
      const response = await requestLink(user.id, user.token, `  ${address.toUpperCase()} `).expect(200);
      const body = response.body;
      expect(body).toEqual({ message: expect.any(String), expires_at: expect.any(String) });
      expectExpiresIn(body.expires_at, 24);

      const pending = await t.as(user.token).get(`/v1/users/${user.id}/email-link/pending`);
      expect(pending.body).toEqual({ pending: true, email: address, expires_at: body.expires_at });

      const mail = await smtp.waitFor(address);
      expect(mail.subject).toMatch(/email sign-in/i);
      expect(mail.text).toMatch(/^http:\/\/localhost\/verify-email\?token=/m);
      const linkToken = tokenFromMail(mail);
      expect(
        await t.database.db
          .selectFrom('account_tokens')
          .select('token_hash')
          .where('token_hash', '=', linkToken)
          .execute(),
      ).toEqual([]);

      const verified = await verify(user.token, linkToken).expect(200);
      expect(verified.body).toEqual({
        message: 'Email account linked',
        platform_account_id: expect.stringMatching(UUID),
      });
      const accountId = verified.body.platform_account_id as string;

      const list = (await t.as(user.token).get(`/v1/users/${user.id}/accounts`).expect(200)).body.data;
      expect(list.find((a: { id: string }) => a.id === accountId)).toMatchObject({
        platform_slug: 'email',
        platform_user_id: address,
        email: address,
        username: user.username,
        is_primary: false,
      });
      expect(await login(t.app, address, 'linked-password-1')).toMatch(/^ses_/);
      expect(await events('account_linked', accountId)).toEqual([
        expect.objectContaining({
          user_id: user.id,
          resource_type: 'platform_account',
          metadata: { platform: 'email' },
        }),
      ]);
      expect((await t.as(user.token).get(`/v1/users/${user.id}/email-link/pending`)).body).toEqual({
        pending: false,
        email: null,
        expires_at: null,
      });

      const reused = await verify(user.token, linkToken).expect(400);
      expect(reused.body).toEqual({
        error: 'BadRequest',
        message: 'Invalid or expired token',
        code: 'mailed_token.invalid',
      });
      // Now that the user has an email account, another link is refused and the email account stays.
      const again = await requestLink(user.id, user.token, `other_${counter}@example.org`).expect(409);
      expect(again.body).toEqual({
        error: 'Conflict',
        message: 'User already has an email account',
        code: 'account.email_already_linked',
      });
    });

    it('the email account becomes primary when the user had none', async () => {
      const user = await createOAuthUser('github');
      await t.database.db
        .updateTable('users')
        .set({ primary_platform_account_id: null })
        .where('id', '=', user.id)
        .execute();
      const address = `primary_${counter}@example.org`;
      expect((await requestLink(user.id, user.token, address)).status).toBe(200);
      const verified = await verify(user.token, tokenFromMail(await smtp.waitFor(address))).expect(200);
      const list = (await t.as(user.token).get(`/v1/users/${user.id}/accounts`).expect(200)).body.data;
      expect(list.find((a: { is_primary: boolean }) => a.is_primary)!.id).toBe(verified.body.platform_account_id);
    });

    it('answers 409 when the user already has an email account', async () => {
      const user = await createUser(t.app);
      const response = await requestLink(user.id, user.token, `fresh_${counter++}@example.org`).expect(409);
      expect(response.body).toEqual({
        error: 'Conflict',
        message: 'User already has an email account',
        code: 'account.email_already_linked',
      });
    });

    it('answers 409 when the address belongs to another email account', async () => {
      const [owner, user] = [await createUser(t.app), await createOAuthUser()];
      const response = await requestLink(user.id, user.token, `${owner.username.toUpperCase()}@example.org`).expect(
        409,
      );
      expect(response.body).toEqual({
        error: 'Conflict',
        message: 'Email is already in use',
        code: 'user.email_in_use',
      });
    });

    it('rejects a short password, a bad email and missing fields with 400 naming the field', async () => {
      const user = await createOAuthUser();
      const short = await requestLink(user.id, user.token, 'short@example.org', 'seven77').expect(400);
      expect(short.body).toEqual({
        error: 'BadRequest',
        message: "Body field 'password' must NOT have fewer than 8 characters",
        code: 'request.validation',
      });
      const bad = await requestLink(user.id, user.token, 'not-an-address');
      expect(bad.body).toEqual({
        error: 'BadRequest',
        message: 'email is not a valid email address',
        code: 'user.invalid_email',
      });
      const missing = await t
        .as(user.token)
        .post(`/v1/users/${user.id}/email-link/request`, unchecked({ email: 'x@example.org' }));
      expect(missing.body).toEqual({
        error: 'BadRequest',
        message: "Body field 'password' is required",
        code: 'request.validation',
      });
    });

    it('needs users:write for another user (admins may), 404 for an unknown user', async () => {
      const [user, other] = [await createOAuthUser(), await createUser(t.app)];
      expect((await requestLink(user.id, other.token, `x_${counter++}@example.org`)).status).toBe(403);
      expect((await t.as(other.token).get(`/v1/users/${user.id}/email-link/pending`)).status).toBe(403);
      expect((await t.as(other.token).delete(`/v1/users/${user.id}/email-link/pending`)).status).toBe(403);
      const address = `by_admin_${counter++}@example.org`;
      expect((await requestLink(user.id, admin, address)).status).toBe(200);
      await smtp.waitFor(address);
      for (const response of [
        await requestLink(MISSING, admin, `y_${counter++}@example.org`),
        await t.as(admin).get(`/v1/users/${MISSING}/email-link/pending`),
        await t.as(admin).delete(`/v1/users/${MISSING}/email-link/pending`),
      ]) {
        expect(response.status).toBe(404);
        expect(response.body).toEqual({ error: 'NotFound', message: 'User not found', code: 'user.not_found' });
      }
    });

    it('a new request replaces the older pending one', async () => {
      const user = await createOAuthUser();
      const first = `first_${counter}@example.org`;
      const second = `second_${counter}@example.org`;
      await requestLink(user.id, user.token, first);
      const firstToken = tokenFromMail(await smtp.waitFor(first));
      await requestLink(user.id, user.token, second);
      const secondToken = tokenFromMail(await smtp.waitFor(second));
      expect((await t.as(user.token).get(`/v1/users/${user.id}/email-link/pending`)).body).toMatchObject({
        pending: true,
        email: second,
      });
      expect((await verify(user.token, firstToken)).status).toBe(400);
      expect((await verify(user.token, secondToken)).status).toBe(200);
    });

    it('cancel: 200, the link stops working, and a second cancel is 404', async () => {
      const user = await createOAuthUser();
      const address = `cancel_${counter}@example.org`;
      await requestLink(user.id, user.token, address);
      const linkToken = tokenFromMail(await smtp.waitFor(address));
      const cancelled = await t.as(user.token).delete(`/v1/users/${user.id}/email-link/pending`).expect(200);
      expect(cancelled.body).toEqual({ message: 'Pending email link cancelled' });
      expect((await t.as(user.token).get(`/v1/users/${user.id}/email-link/pending`)).body).toEqual({
        pending: false,
        email: null,
        expires_at: null,
      });
      expect((await verify(user.token, linkToken)).status).toBe(400);
      const none = await t.as(user.token).delete(`/v1/users/${user.id}/email-link/pending`).expect(404);
      expect(none.body).toEqual({
        error: 'NotFound',
        message: 'No pending email link',
        code: 'account.no_email_link_pending',
      });
    });

    it('verify: 400 for unknown and expired tokens, 401 without credentials, 409 when the address was taken meanwhile', async () => {
      const user = await createOAuthUser();
      const unknown = await verify(user.token, 'no-such-token').expect(400);
      expect(unknown.body).toEqual({
        error: 'BadRequest',
        message: 'Invalid or expired token',
        code: 'mailed_token.invalid',
      });

      const expiring = `expired_${counter}@example.org`;
      await requestLink(user.id, user.token, expiring);
      const expiredToken = tokenFromMail(await smtp.waitFor(expiring));
      await t.database.db
        .updateTable('account_tokens')
        .set({ expires_at: new Date(Date.now() - 1000) })
        .where('token_hash', '=', hashToken(expiredToken))
        .execute();
      expect((await verify(user.token, expiredToken)).body).toEqual({
        error: 'BadRequest',
        message: 'Invalid or expired token',
        code: 'mailed_token.invalid',
      });
      expect((await t.as(user.token).get(`/v1/users/${user.id}/email-link/pending`).expect(200)).body.pending).toBe(
        false,
      );

      const taken = `taken_${counter}@example.org`;
      await requestLink(user.id, user.token, taken);
      const linkToken = tokenFromMail(await smtp.waitFor(taken));
      expect((await t.as(null).post('/v1/users/email-link/verify', { token: linkToken })).status).toBe(401);
      await t.database.db.transaction().execute((trx) =>
        t.app.services.users.createEmailUser(trx, {
          email: taken,
          username: `taker_${counter}`,
          password: 'taker-password',
        }),
      );
      const conflict = await verify(admin, linkToken).expect(409);
      expect(conflict.body).toEqual({
        error: 'Conflict',
        message: 'Email is already in use',
        code: 'user.email_in_use',
      });
      expect((await t.as(user.token).get(`/v1/users/${user.id}/accounts`).expect(200)).body.data).toHaveLength(1);
    });

    it('refuses a link while the email platform is disabled', async () => {
      const user = await createOAuthUser();
      await t.as(admin).patch('/v1/platforms/email/enabled', { enabled: false });
      try {
        const response = await requestLink(user.id, user.token, `disabled_${counter}@example.org`).expect(400);
        expect(response.body).toEqual({
          error: 'BadRequest',
          message: 'Email sign-in is disabled',
          code: 'account.email_sign_in_disabled',
        });
      } finally {
        await t.as(admin).patch('/v1/platforms/email/enabled', { enabled: true });
      }
    });

    it('completeEmailLink (for POST /v1/auth/verify-email) returns the user and the new account', async () => {
      const user = await createOAuthUser();
      const address = `service_${counter}@example.org`;
      await requestLink(user.id, user.token, address);
      const linkToken = tokenFromMail(await smtp.waitFor(address));
      const request = { ip: '127.0.0.1', headers: {} } as Parameters<
        typeof t.app.services.accounts.completeEmailLink
      >[0];
      await expect(t.app.services.accounts.completeEmailLink(request, 'unknown')).rejects.toMatchObject({
        status: 400,
        message: 'Invalid or expired token',
      });
      const result = await t.app.services.accounts.completeEmailLink(request, linkToken);
      expect(result).toEqual({ userId: user.id, platformAccountId: expect.stringMatching(UUID) });
    });
  });
});

describe('email link when the mail cannot be sent', () => {
  let t: TestApp;
  beforeAll(async () => {
    // Nothing listens on port 9 of loopback: every send fails.
    t = await buildTestApp({ config: { smtpUrl: 'smtp://127.0.0.1:9' } });
  });
  afterAll(() => t.close());

  it('answers 500 with a clear message and keeps no pending token', async () => {
    const admin = await login(t.app, 'admin', TEST_ADMIN.password);
    const user = await t.database.db
      .insertInto('users')
      .values({ username: 'no_mail_user' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const response = await t
      .as(admin)
      .post(`/v1/users/${user.id}/email-link/request`, { email: 'nomail@example.org', password: 'linked-password-1' })
      .expect(500);
    expect(response.body).toEqual({
      error: 'InternalServerError',
      message: 'The verification email could not be sent; please try again later',
      code: 'mail.not_sent',
    });
    expect(
      await t.database.db.selectFrom('account_tokens').select('id').where('user_id', '=', user.id).execute(),
    ).toEqual([]);
    const pending = await t.as(admin).get(`/v1/users/${user.id}/email-link/pending`);
    expect(pending.body).toEqual({ pending: false, email: null, expires_at: null });
  });
});
