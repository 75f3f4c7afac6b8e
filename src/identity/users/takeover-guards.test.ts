import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generate } from 'otplib';
import { tokenFromMail, type FakeSmtp } from '../../../test/fakes/smtp.js';
import {
  bearer,
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

  beforeAll(async () => {
    ({ t, smtp } = await buildMailingTestApp({ config: { publicUrl: 'https://id.example.org' } }));
    admin = await login(t.app, TEST_ADMIN.username, TEST_ADMIN.password);
    const role = await createRoleWith(t.app, 'Helpdesk', ['users:read', 'users:write', 'users:delete']);
    helpdesk = await createUser(t.app, ['role_user', role]);
    adminId = (await t.app.services.users.findByUsername(TEST_ADMIN.username))!.id;
  });
  afterAll(() => t.close());

  const call = (method: 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'GET', url: string, token: string, payload?: object) =>
    t.app.inject({ method, url, payload, headers: bearer(token) });
  const OUTRANKED = {
    error: 'Forbidden',
    message: 'You cannot manage the sign-in of a user who holds permissions you do not hold',
    code: 'user.sign_in_beyond_caller',
  };

  it('a users:write holder cannot link an email and password to a super admin', async () => {
    const response = await call('POST', `/v1/users/${adminId}/email-link/request`, helpdesk.token, {
      email: 'mine@evil.example',
      password: 'attacker password',
    });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual(OUTRANKED);
    expect(smtp.received.some((mail) => mail.to === 'mine@evil.example')).toBe(false);
  });

  it('a users:write holder cannot unlink or re-prime the accounts of a super admin', async () => {
    const accounts = (await call('GET', `/v1/users/${adminId}/accounts`, admin)).json().data as { id: string }[];
    for (const [method, url] of [
      ['PUT', `/v1/users/${adminId}/accounts/${accounts[0]!.id}/primary`],
      ['DELETE', `/v1/users/${adminId}/accounts/${accounts[0]!.id}`],
    ] as const) {
      expect((await call(method, url, helpdesk.token)).json()).toEqual(OUTRANKED);
    }
  });

  it('a users:delete holder cannot delete a super admin, but can delete a plain user', async () => {
    expect((await call('DELETE', `/v1/users/${adminId}`, helpdesk.token)).json()).toEqual(OUTRANKED);
    const plain = await createUser(t.app);
    expect((await call('DELETE', `/v1/users/${plain.id}`, helpdesk.token)).statusCode).toBe(204);
  });

  it('deleting the owner of a system key leaves the key working', async () => {
    const owner = await createUser(t.app, ['role_user', 'role_admin']);
    const key = await createApiKey(t.app, admin, { name: 'owned system key', is_system: true, user_id: undefined });
    await t.database.db.updateTable('api_keys').set({ user_id: owner.id }).where('id', '=', key.id).execute();
    expect((await call('DELETE', `/v1/users/${owner.id}`, admin)).statusCode).toBe(204);
    const row = await t.database.db
      .selectFrom('api_keys')
      .select('is_active')
      .where('id', '=', key.id)
      .executeTakeFirstOrThrow();
    expect(row.is_active).toBe(true);
    expect(
      (
        await t.app.inject({
          method: 'POST',
          url: '/v1/auth/2fa/check',
          headers: bearer(key.key),
          payload: { user_id: owner.id },
        })
      ).statusCode,
    ).not.toBe(401);
  });

  it('a reset link mailed to the old address stops working once the address changes', async () => {
    const user = await createUser(t.app);
    const oldAddress = `${user.username}@example.org`;
    await t.app.inject({ method: 'POST', url: '/v1/auth/reset-password', payload: { email: oldAddress } });
    const resetToken = tokenFromMail(await smtp.waitFor(oldAddress, (mail) => /reset/i.test(mail.subject)));
    const changed = await call('PATCH', `/v1/users/${user.id}`, admin, { email: `${user.username}@new.example.org` });
    expect(changed.statusCode).toBe(200);
    const reset = await t.app.inject({
      method: 'POST',
      url: '/v1/auth/reset-password/complete',
      payload: { token: resetToken, new_password: 'taken over!!' },
    });
    expect(reset.json()).toEqual({
      error: 'BadRequest',
      message: 'Invalid or expired token',
      code: 'mailed_token.invalid',
    });
  });

  it('a user who looks up their own address gets their own record, even if another account shares it', async () => {
    const user = await createUser(t.app);
    const response = await call('GET', `/v1/users/email/${user.username}@example.org`, user.token);
    expect(response.statusCode).toBe(200);
    expect(response.json().data.id).toBe(user.id);
  });

  it('REGISTRATION_ENABLED=false stops new users through OAuth too', async () => {
    const closed = await buildTestApp({ config: { registrationEnabled: false } });
    try {
      await closed.database.db
        .insertInto('platforms')
        .values({ name: 'Forge', slug: 'forge', is_oauth: true })
        .execute();
      const response = await closed.app.inject({
        method: 'POST',
        url: '/v1/users/oauth',
        headers: bearer(TEST_SYSTEM_KEY),
        payload: { email: null, name: 'New Person', oauthProvider: 'forge', oauthProviderId: 'x-1', image: null },
      });
      expect(response.json()).toEqual({
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
      const setup = (await call('POST', '/v1/users/me/2fa/setup', user.token, {})).json();
      const code = await generate({ secret: setup.secret });
      expect((await call('POST', '/v1/users/me/2fa/verify', user.token, { code })).statusCode).toBe(200);
      const signIn = await t.app.inject({
        method: 'POST',
        url: '/v1/auth/login',
        payload: { identifier: user.username, password: user.password },
      });
      return { user, secret: setup.secret as string, tempToken: signIn.json().temp_token as string };
    }

    it('parallel guesses on one temporary token cannot exceed its five attempts', async () => {
      const { user, secret, tempToken } = await userWithTwoFactor();
      const guesses = await Promise.all(
        Array.from({ length: 12 }, () =>
          t.app.inject({
            method: 'POST',
            url: '/v1/auth/2fa/verify',
            payload: { temp_token: tempToken, code: '000000' },
          }),
        ),
      );
      expect(guesses.every((response) => response.statusCode === 401)).toBe(true);
      const row = await t.database.db
        .selectFrom('two_factor_challenges')
        .select('attempts')
        .where('user_id', '=', user.id)
        .executeTakeFirstOrThrow();
      expect(row.attempts).toBe(5);
      const right = await t.app.inject({
        method: 'POST',
        url: '/v1/auth/2fa/verify',
        payload: { temp_token: tempToken, code: await generate({ secret }) },
      });
      expect(right.statusCode).toBe(401);
    });

    it('a password reset closes the temporary tokens opened with the old password', async () => {
      const { user, secret, tempToken } = await userWithTwoFactor();
      const email = `${user.username}@example.org`;
      await t.app.inject({ method: 'POST', url: '/v1/auth/reset-password', payload: { email } });
      const token = tokenFromMail(await smtp.waitFor(email, (mail) => /reset/i.test(mail.subject)));
      expect(
        (
          await t.app.inject({
            method: 'POST',
            url: '/v1/auth/reset-password/complete',
            payload: { token, new_password: 'brand new pass' },
          })
        ).statusCode,
      ).toBe(200);
      const late = await t.app.inject({
        method: 'POST',
        url: '/v1/auth/2fa/verify',
        payload: { temp_token: tempToken, code: await generate({ secret }) },
      });
      expect(late.statusCode).toBe(401);
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
  });
  afterAll(() => t.close());

  const call = (method: 'POST' | 'PATCH' | 'DELETE' | 'GET', url: string, token: string, payload?: object) =>
    t.app.inject({ method, url, payload, headers: bearer(token) });
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
    const secret = (await call('POST', '/v1/users/me/2fa/setup', target.token, {})).json().secret as string;
    for (const [method, url, payload] of [
      ['POST', '/v1/users/me/2fa/setup', {}],
      ['POST', '/v1/users/me/2fa/verify', { code: await codeAt(secret) }],
      ['POST', `/v1/users/me/2fa/setup?user_id=${target.id}`, {}],
    ] as const) {
      const response = await call(method, url, moderator.token, { ...payload, user_id: target.id });
      expect({ url, status: response.statusCode, body: response.json() }).toEqual({
        url,
        status: 403,
        body: OUTRANKED,
      });
    }
    // The super admin's own setup is untouched: their code still enables it.
    expect(
      (await call('POST', '/v1/users/me/2fa/verify', target.token, { code: await codeAt(secret) })).statusCode,
    ).toBe(200);
    for (const [method, url] of [
      ['DELETE', '/v1/users/me/2fa'],
      ['POST', '/v1/users/me/2fa/backup-codes/regenerate'],
    ] as const) {
      const response = await call(method, url, moderator.token, { user_id: target.id, code: await codeAt(secret, 1) });
      expect({ url, status: response.statusCode, body: response.json() }).toEqual({
        url,
        status: 403,
        body: OUTRANKED,
      });
    }
    expect((await call('GET', `/v1/users/me/2fa/status?user_id=${target.id}`, admin)).json()).toMatchObject({
      enabled: true,
      backup_codes_remaining: 8,
    });
  });

  it('may set up, verify, renew and turn off the 2FA of a plain user', async () => {
    const target = await createUser(t.app);
    const setup = await call('POST', '/v1/users/me/2fa/setup', moderator.token, { user_id: target.id });
    expect(setup.statusCode).toBe(200);
    const secret = setup.json().secret as string;
    expect(
      (
        await call('POST', '/v1/users/me/2fa/verify', moderator.token, {
          user_id: target.id,
          code: await codeAt(secret),
        })
      ).statusCode,
    ).toBe(200);
    const renewed = await call('POST', '/v1/users/me/2fa/backup-codes/regenerate', moderator.token, {
      user_id: target.id,
      code: await codeAt(secret, 1),
    });
    expect(renewed.statusCode).toBe(200);
    expect(
      (
        await call('DELETE', '/v1/users/me/2fa', moderator.token, {
          user_id: target.id,
          code: renewed.json().backup_codes[0],
        })
      ).statusCode,
    ).toBe(200);
  });

  it('may not lift a ban a super admin placed on a super admin, but may lift one on a plain user', async () => {
    const target = await superAdmin();
    expect((await call('POST', `/v1/users/${target.id}/ban`, admin, { reason: 'compromised' })).statusCode).toBe(200);
    expect((await call('DELETE', `/v1/users/${target.id}/ban`, moderator.token)).json()).toEqual(OUTRANKED);
    expect((await call('GET', `/v1/users/${target.id}/ban`, admin)).json()).toMatchObject({ is_banned: true });

    const plain = await createUser(t.app);
    expect((await call('POST', `/v1/users/${plain.id}/ban`, admin, { reason: 'spam' })).statusCode).toBe(200);
    expect((await call('DELETE', `/v1/users/${plain.id}/ban`, moderator.token)).statusCode).toBe(200);
  });

  it('may not bring back a deleted super admin (judged on the roles they still hold), but may a plain user', async () => {
    const target = await superAdmin();
    expect((await call('DELETE', `/v1/users/${target.id}`, admin)).statusCode).toBe(204);
    expect((await call('POST', `/v1/admin/users/${target.id}/cancel-deletion`, moderator.token)).json()).toEqual(
      OUTRANKED,
    );
    expect((await call('GET', `/v1/admin/users/${target.id}/deletion-status`, admin)).json()).toMatchObject({
      is_deleted: true,
    });

    const plain = await createUser(t.app);
    expect((await call('DELETE', `/v1/users/${plain.id}`, admin)).statusCode).toBe(204);
    expect((await call('POST', `/v1/admin/users/${plain.id}/cancel-deletion`, moderator.token)).statusCode).toBe(200);
  });

  it("may not rename a super admin (nor take their sign-in name) or change their locale, but may a plain user's", async () => {
    const target = await superAdmin();
    for (const [url, payload] of [
      [`/v1/users/${target.id}/username`, { username: 'taken_over' }],
      [`/v1/users/${target.id}`, { username: 'taken_over' }],
      [`/v1/users/${target.id}/locale`, { locale: 'de' }],
    ] as const) {
      const response = await call('PATCH', url, moderator.token, payload);
      expect({ url, status: response.statusCode, body: response.json() }).toEqual({
        url,
        status: 403,
        body: OUTRANKED,
      });
    }
    expect((await call('GET', `/v1/users/${target.id}`, admin)).json().data).toMatchObject({
      username: target.username,
      preferred_locale: null,
    });

    const plain = await createUser(t.app);
    expect(
      (await call('PATCH', `/v1/users/${plain.id}/username`, moderator.token, { username: `${plain.username}_x` }))
        .statusCode,
    ).toBe(200);
    expect((await call('PATCH', `/v1/users/${plain.id}/locale`, moderator.token, { locale: 'de' })).statusCode).toBe(
      200,
    );
  });

  it("may not cancel a super admin's pending email change or email link, but may a plain user's", async () => {
    const target = await superAdmin();
    for (const url of [`/v1/users/${target.id}/email/pending`, `/v1/users/${target.id}/email-link/pending`]) {
      const response = await call('DELETE', url, moderator.token);
      expect({ url, status: response.statusCode, body: response.json() }).toEqual({
        url,
        status: 403,
        body: OUTRANKED,
      });
    }
    const plain = await createUser(t.app);
    // Past the check: nothing is pending for the plain user.
    expect((await call('DELETE', `/v1/users/${plain.id}/email/pending`, moderator.token)).json()).toMatchObject({
      code: 'email_change.none_pending',
    });
    expect((await call('DELETE', `/v1/users/${plain.id}/email-link/pending`, moderator.token)).json()).toMatchObject({
      code: 'account.no_email_link_pending',
    });
  });

  it('may not give a super admin a role or take one away, but may a plain user', async () => {
    const target = await superAdmin();
    const role = await createRoleWith(t.app, 'Watchers', []);
    await t.app.services.access.grantRoleDirectly(moderator.id, role);
    await t.app.services.access.invalidateUser(moderator.id);
    expect((await call('POST', `/v1/users/${target.id}/roles`, moderator.token, { role_id: role })).json()).toEqual(
      OUTRANKED,
    );
    expect((await call('DELETE', `/v1/users/${target.id}/roles/role_user`, moderator.token)).json()).toEqual(OUTRANKED);

    const plain = await createUser(t.app);
    expect((await call('POST', `/v1/users/${plain.id}/roles`, moderator.token, { role_id: role })).statusCode).toBe(
      201,
    );
    expect((await call('DELETE', `/v1/users/${plain.id}/roles/${role}`, moderator.token)).statusCode).toBe(204);
  });
});
