import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generate } from 'otplib';
import { tokenFromMail, type FakeSmtp } from '../../../test/fakes/smtp.js';
import { type Client } from '../../../test/client.js';
import {
  buildMailingTestApp,
  buildTestApp,
  createApiKey,
  createRoleWith,
  createUser,
  login,
  TEST_ADMIN,
  TEST_SYSTEM_KEY,
  type TestApp,
} from '../../../test/helpers.js';

/**
 * The rules that keep one account from being taken over through another area:
 * whoever can change a user's sign-in (email, linked accounts) or delete them
 * must outrank them, and tokens tied to an old state stop working.
 */
describe('account takeover guards', () => {
  let smtp: FakeSmtp;
  let t: TestApp;
  let admin: string;
  let helpdesk: Awaited<ReturnType<typeof createUser>>;
  let adminId: string;
  let api: Client;
  let asHelpdesk: Client;

  beforeAll(async () => {
    ({ t, smtp } = await buildMailingTestApp({ config: { publicUrl: 'https://id.example.org' } }));
    admin = await login(t.app, TEST_ADMIN.username, TEST_ADMIN.password);
    const role = await createRoleWith(t.app, 'Helpdesk', ['users:read', 'users:write', 'users:delete']);
    helpdesk = await createUser(t.app, ['role_user', role]);
    adminId = (await t.app.services.users.findByUsername(TEST_ADMIN.username))!.id;
    api = t.as(admin);
    asHelpdesk = t.as(helpdesk.token);
  });
  afterAll(() => t.close());

  const OUTRANKED = {
    error: 'Forbidden',
    message: 'You cannot manage the sign-in of a user who holds permissions you do not hold',
    code: 'user.sign_in_beyond_caller',
  };

  it('a users:write holder cannot link an email and password to a super admin', async () => {
    const response = await asHelpdesk
      .post(`/v1/users/${adminId}/email-link/request`, { email: 'mine@evil.example', password: 'attacker password' })
      .expect(403);
    expect(response.body).toEqual(OUTRANKED);
    expect(smtp.received.some((mail) => mail.to === 'mine@evil.example')).toBe(false);
  });

  it('a users:write holder cannot unlink or re-prime the accounts of a super admin', async () => {
    const accounts = (await api.get(`/v1/users/${adminId}/accounts`).expect(200)).body.data;
    const account = accounts[0]!.id;
    for (const send of [
      () => asHelpdesk.put(`/v1/users/${adminId}/accounts/${account}/primary`),
      () => asHelpdesk.delete(`/v1/users/${adminId}/accounts/${account}`),
    ]) {
      expect((await send()).body).toEqual(OUTRANKED);
    }
  });

  it('a users:delete holder cannot delete a super admin, but can delete a plain user', async () => {
    expect((await asHelpdesk.delete(`/v1/users/${adminId}`)).body).toEqual(OUTRANKED);
    const plain = await createUser(t.app);
    expect((await asHelpdesk.delete(`/v1/users/${plain.id}`)).status).toBe(204);
  });

  it('deleting the owner of a system key leaves the key working', async () => {
    const owner = await createUser(t.app, ['role_user', 'role_admin']);
    const key = await createApiKey(t.app, admin, { name: 'owned system key', is_system: true, user_id: undefined });
    await t.database.db.updateTable('api_keys').set({ user_id: owner.id }).where('id', '=', key.id).execute();
    expect((await api.delete(`/v1/users/${owner.id}`)).status).toBe(204);
    const row = await t.database.db
      .selectFrom('api_keys')
      .select('is_active')
      .where('id', '=', key.id)
      .executeTakeFirstOrThrow();
    expect(row.is_active).toBe(true);
    expect((await t.as(key.key).post('/v1/auth/2fa/check', { user_id: owner.id })).status).not.toBe(401);
  });

  it('a reset link mailed to the old address stops working once the address changes', async () => {
    const user = await createUser(t.app);
    const oldAddress = `${user.username}@example.org`;
    await t.as(null).post('/v1/auth/reset-password', { email: oldAddress });
    const resetToken = tokenFromMail(await smtp.waitFor(oldAddress, (mail) => /reset/i.test(mail.subject)));
    await api.patch(`/v1/users/${user.id}`, { email: `${user.username}@new.example.org` }).expect(200);
    const reset = await t
      .as(null)
      .post('/v1/auth/reset-password/complete', { token: resetToken, new_password: 'taken over!!' });
    expect(reset.body).toEqual({
      error: 'BadRequest',
      message: 'Invalid or expired token',
      code: 'mailed_token.invalid',
    });
  });

  it('a user who looks up their own address gets their own record, even if another account shares it', async () => {
    const user = await createUser(t.app);
    const response = await t.as(user.token).get(`/v1/users/email/${user.username}@example.org`).expect(200);
    expect(response.body.data.id).toBe(user.id);
  });

  it('REGISTRATION_ENABLED=false stops new users through OAuth too', async () => {
    const closed = await buildTestApp({ config: { registrationEnabled: false } });
    try {
      await closed.database.db
        .insertInto('platforms')
        .values({ name: 'Forge', slug: 'forge', is_oauth: true })
        .execute();
      const response = await closed.as(TEST_SYSTEM_KEY).post('/v1/users/oauth', {
        email: null,
        name: 'New Person',
        oauthProvider: 'forge',
        oauthProviderId: 'x-1',
        image: null,
      });
      expect(response.body).toEqual({
        error: 'BadRequest',
        message: "Registration through 'forge' is disabled",
        code: 'oauth_sign_in.registration_disabled',
      });
    } finally {
      await closed.close();
    }
  });

  describe('two-factor sign-in', () => {
    async function userWithTwoFactor() {
      const user = await createUser(t.app);
      const setup = (await t.as(user.token).post('/v1/users/me/2fa/setup', {}).expect(200)).body;
      const code = await generate({ secret: setup.secret });
      expect((await t.as(user.token).post('/v1/users/me/2fa/verify', { code })).status).toBe(200);
      const signIn = await t
        .as(null)
        .post('/v1/auth/login', { identifier: user.username, password: user.password })
        .expect(200);
      return { user, secret: setup.secret, tempToken: signIn.body.temp_token! };
    }

    it('parallel guesses on one temporary token cannot exceed its five attempts', async () => {
      const { user, secret, tempToken } = await userWithTwoFactor();
      const guesses = await Promise.all(
        Array.from({ length: 12 }, () =>
          t.as(null).post('/v1/auth/2fa/verify', { temp_token: tempToken, code: '000000' }),
        ),
      );
      expect(guesses.every((response) => response.status === 401)).toBe(true);
      const row = await t.database.db
        .selectFrom('two_factor_challenges')
        .select('attempts')
        .where('user_id', '=', user.id)
        .executeTakeFirstOrThrow();
      expect(row.attempts).toBe(5);
      const right = await t
        .as(null)
        .post('/v1/auth/2fa/verify', { temp_token: tempToken, code: await generate({ secret }) });
      expect(right.status).toBe(401);
    });

    it('a password reset closes the temporary tokens opened with the old password', async () => {
      const { user, secret, tempToken } = await userWithTwoFactor();
      const email = `${user.username}@example.org`;
      await t.as(null).post('/v1/auth/reset-password', { email });
      const token = tokenFromMail(await smtp.waitFor(email, (mail) => /reset/i.test(mail.subject)));
      await t.as(null).post('/v1/auth/reset-password/complete', { token, new_password: 'brand new pass' }).expect(200);
      const late = await t
        .as(null)
        .post('/v1/auth/2fa/verify', { temp_token: tempToken, code: await generate({ secret }) });
      expect(late.status).toBe(401);
    });
  });
});

/**
 * Nobody changes a super admin's sign-in but a super admin: every route that acts on another user goes
 * through one check (`assertMayManageUser`), so a moderator who may ban, edit users and manage 2FA is
 * refused on a super admin and let through on a plain user.
 */
describe('a moderator and a super admin', () => {
  let t: TestApp;
  let admin: string;
  let moderator: Awaited<ReturnType<typeof createUser>>;
  let api: Client;
  let asModerator: Client;
  beforeAll(async () => {
    t = await buildTestApp();
    admin = await login(t.app, TEST_ADMIN.username, TEST_ADMIN.password);
    const role = await createRoleWith(t.app, 'Moderators', [
      'users:read',
      'users:ban',
      'users:write',
      'two_factor:manage',
    ]);
    moderator = await createUser(t.app, ['role_user', role]);
    api = t.as(admin);
    asModerator = t.as(moderator.token);
  });
  afterAll(() => t.close());

  const OUTRANKED = {
    error: 'Forbidden',
    message: 'You cannot manage the sign-in of a user who holds permissions you do not hold',
    code: 'user.sign_in_beyond_caller',
  };
  const codeAt = (secret: string, offsetSteps = 0) =>
    generate({ secret, epoch: Math.floor(t.clock.nowMs() / 1000) + offsetSteps * 30 });
  const superAdmin = () => createUser(t.app, ['role_user', 'role_admin']);

  it('may not set up, verify, turn off or renew the 2FA of a super admin', async () => {
    const target = await superAdmin();
    const secret = (await t.as(target.token).post('/v1/users/me/2fa/setup', {}).expect(200)).body.secret;
    for (const [url, payload] of [
      ['/v1/users/me/2fa/setup', {}],
      ['/v1/users/me/2fa/verify', { code: await codeAt(secret) }],
      [`/v1/users/me/2fa/setup?user_id=${target.id}`, {}],
    ] as const) {
      const response = await asModerator.post(url, { ...payload, user_id: target.id });
      expect({ url, status: response.status, body: response.body }).toEqual({
        url,
        status: 403,
        body: OUTRANKED,
      });
    }
    // The super admin's own setup is untouched: their code still enables it.
    expect((await t.as(target.token).post('/v1/users/me/2fa/verify', { code: await codeAt(secret) })).status).toBe(200);
    const withCode = async () => ({ user_id: target.id, code: await codeAt(secret, 1) });
    for (const [url, send] of [
      ['/v1/users/me/2fa', async () => asModerator.delete('/v1/users/me/2fa', { body: await withCode() })],
      [
        '/v1/users/me/2fa/backup-codes/regenerate',
        async () => asModerator.post('/v1/users/me/2fa/backup-codes/regenerate', await withCode()),
      ],
    ] as const) {
      const response = await send();
      expect({ url, status: response.status, body: response.body }).toEqual({
        url,
        status: 403,
        body: OUTRANKED,
      });
    }
    expect((await api.get('/v1/users/me/2fa/status', { query: { user_id: target.id } })).body).toMatchObject({
      enabled: true,
      backup_codes_remaining: 8,
    });
  });

  it('may set up, verify, renew and turn off the 2FA of a plain user', async () => {
    const target = await createUser(t.app);
    const setup = await asModerator.post('/v1/users/me/2fa/setup', { user_id: target.id }).expect(200);
    const secret = setup.body.secret;
    await asModerator.post('/v1/users/me/2fa/verify', { user_id: target.id, code: await codeAt(secret) }).expect(200);
    const renewed = await asModerator
      .post('/v1/users/me/2fa/backup-codes/regenerate', { user_id: target.id, code: await codeAt(secret, 1) })
      .expect(200);
    await asModerator
      .delete('/v1/users/me/2fa', { body: { user_id: target.id, code: renewed.body.backup_codes[0]! } })
      .expect(200);
  });

  it('may not lift a ban a super admin placed on a super admin, but may lift one on a plain user', async () => {
    const target = await superAdmin();
    expect((await api.post(`/v1/users/${target.id}/ban`, { reason: 'compromised' })).status).toBe(200);
    expect((await asModerator.delete(`/v1/users/${target.id}/ban`)).body).toEqual(OUTRANKED);
    expect((await api.get(`/v1/users/${target.id}/ban`)).body).toMatchObject({ is_banned: true });

    const plain = await createUser(t.app);
    expect((await api.post(`/v1/users/${plain.id}/ban`, { reason: 'spam' })).status).toBe(200);
    expect((await asModerator.delete(`/v1/users/${plain.id}/ban`)).status).toBe(200);
  });

  it('may not bring back a deleted super admin (judged on the roles they still hold), but may a plain user', async () => {
    const target = await superAdmin();
    expect((await api.delete(`/v1/users/${target.id}`)).status).toBe(204);
    expect((await asModerator.post(`/v1/admin/users/${target.id}/cancel-deletion`)).body).toEqual(OUTRANKED);
    expect((await api.get(`/v1/admin/users/${target.id}/deletion-status`)).body).toMatchObject({
      is_deleted: true,
    });

    const plain = await createUser(t.app);
    expect((await api.delete(`/v1/users/${plain.id}`)).status).toBe(204);
    expect((await asModerator.post(`/v1/admin/users/${plain.id}/cancel-deletion`)).status).toBe(200);
  });

  it("may not rename a super admin (nor take their sign-in name) or change their locale, but may a plain user's", async () => {
    const target = await superAdmin();
    for (const [url, payload] of [
      [`/v1/users/${target.id}/username`, { username: 'taken_over' }],
      [`/v1/users/${target.id}`, { username: 'taken_over' }],
      [`/v1/users/${target.id}/locale`, { locale: 'de' }],
    ] as const) {
      const response = await asModerator.patch(url, payload);
      expect({ url, status: response.status, body: response.body }).toEqual({
        url,
        status: 403,
        body: OUTRANKED,
      });
    }
    expect((await api.get(`/v1/users/${target.id}`).expect(200)).body.data).toMatchObject({
      username: target.username,
      preferred_locale: null,
    });

    const plain = await createUser(t.app);
    expect(
      (await asModerator.patch(`/v1/users/${plain.id}/username`, { username: `${plain.username}_x` })).status,
    ).toBe(200);
    expect((await asModerator.patch(`/v1/users/${plain.id}/locale`, { locale: 'de' })).status).toBe(200);
  });

  it("may not cancel a super admin's pending email change or email link, but may a plain user's", async () => {
    const target = await superAdmin();
    for (const url of [`/v1/users/${target.id}/email/pending`, `/v1/users/${target.id}/email-link/pending`] as const) {
      const response = await asModerator.delete(url);
      expect({ url, status: response.status, body: response.body }).toEqual({
        url,
        status: 403,
        body: OUTRANKED,
      });
    }
    const plain = await createUser(t.app);
    // Past the check: nothing is pending for the plain user.
    expect((await asModerator.delete(`/v1/users/${plain.id}/email/pending`)).body).toMatchObject({
      code: 'email_change.none_pending',
    });
    expect((await asModerator.delete(`/v1/users/${plain.id}/email-link/pending`)).body).toMatchObject({
      code: 'account.no_email_link_pending',
    });
  });

  it('may not give a super admin a role or take one away, but may a plain user', async () => {
    const target = await superAdmin();
    const role = await createRoleWith(t.app, 'Watchers', []);
    await t.app.services.access.grantRoleDirectly(moderator.id, role);
    await t.app.services.access.invalidateUser(moderator.id);
    expect((await asModerator.post(`/v1/users/${target.id}/roles`, { role_id: role })).body).toEqual(OUTRANKED);
    expect((await asModerator.delete(`/v1/users/${target.id}/roles/role_user`)).body).toEqual(OUTRANKED);

    const plain = await createUser(t.app);
    expect((await asModerator.post(`/v1/users/${plain.id}/roles`, { role_id: role })).status).toBe(201);
    expect((await asModerator.delete(`/v1/users/${plain.id}/roles/${role}`)).status).toBe(204);
  });
});
