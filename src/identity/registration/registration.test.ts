import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeBotVerifier, type FakeBotVerifier } from '../../../test/fakes/bot-verifier.js';
import { startFakeSmtp, tokenFromMail, type FakeSmtp } from '../../../test/fakes/smtp.js';
import { unchecked } from '../../../test/client.js';
import {
  buildMailingTestApp,
  buildTestApp,
  createUser,
  expectExpiresIn,
  login,
  signedInBody,
  TEST_ADMIN,
  TEST_SYSTEM_KEY,
  type TestApp,
} from '../../../test/helpers.js';

describe('registration', () => {
  let smtp: FakeSmtp;
  let t: TestApp;
  beforeAll(async () => {
    ({ t, smtp } = await buildMailingTestApp({ config: { publicUrl: 'https://app.waygate.test' } }));
  });
  afterAll(() => t.close());

  let n = 0;
  const fresh = () => {
    n += 1;
    return { email: `New.Person${n}@Example.org`, username: `New_Person${n}`, password: 'long enough pw' };
  };

  async function registerAndGetToken(input = fresh()) {
    const response = await t.as(null).post('/v1/auth/register', input);
    expect(response.status).toBe(200);
    return { input, token: tokenFromMail(await smtp.waitFor(input.email.toLowerCase())) };
  }

  it('starts a 24-hour pending registration and mails a link to PUBLIC_URL/verify-email', async () => {
    const input = fresh();
    const { body } = await t.as(null).post('/v1/auth/register', input).expect(200);
    expect(body).toEqual({ message: expect.any(String), expires_at: expect.any(String) });
    expectExpiresIn(body.expires_at, 24);
    const mail = await smtp.waitFor(input.email.toLowerCase());
    expect(mail.subject).toMatch(/confirm your email address/i);
    expect(mail.text).toMatch(/https:\/\/app\.waygate\.test\/verify-email\?token=/);
    expect(mail.html).toContain('https://app.waygate.test/verify-email?token=');
    const pending = await t.database.db
      .selectFrom('pending_registrations')
      .selectAll()
      .where('email', '=', input.email.toLowerCase())
      .executeTakeFirstOrThrow();
    expect(pending.username).toBe(input.username.toLowerCase());
    expect(pending.token_hash).not.toContain(tokenFromMail(mail));
    expect(pending.password_hash).toMatch(/^\$argon2id\$/);
    // Nothing exists until the link is followed.
    expect(await t.app.services.users.findByUsername(input.username.toLowerCase())).toBeUndefined();
  });

  it('register/verify creates the user with role_user and signs in (201 AuthResponse, lower-cased names)', async () => {
    const { input, token } = await registerAndGetToken();
    const { body } = await t.as(null).post('/v1/auth/register/verify', { token }).expect(201);
    expect(body).toEqual(signedInBody({ email: input.email.toLowerCase(), username: input.username.toLowerCase() }));
    const roles = await t.as(body.session_token).get(`/v1/users/${body.user_id}/roles`).expect(200);
    expect(roles.body.roles.map((r) => r.id)).toEqual(['role_user']);
    const signIn = await t
      .as(null)
      .post('/v1/auth/login', { identifier: input.email.toUpperCase(), password: input.password })
      .expect(200);
    expect(signIn.body.user_id).toBe(body.user_id);
    const created = await t.database.db
      .selectFrom('audit_events')
      .select('event_type')
      .where('user_id', '=', body.user_id)
      .execute();
    expect(created.map((e) => e.event_type)).toEqual(expect.arrayContaining(['user_created', 'session_created']));
    // The token worked once.
    expect((await t.as(null).post('/v1/auth/register/verify', { token })).body).toEqual({
      error: 'BadRequest',
      message: 'Invalid or expired token',
      code: 'mailed_token.invalid',
    });
  });

  it('verify-email completes a registration without a session and says it was one', async () => {
    const { input, token } = await registerAndGetToken();
    const response = await t.as(null).post('/v1/auth/verify-email', { token });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      success: true,
      message: expect.any(String),
      verification_type: 'registration',
      user_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      redirect_url: 'https://app.waygate.test/login',
    });
    expect(response.body).not.toHaveProperty('session_token');
    expect(
      (await t.as(null).post('/v1/auth/login', { identifier: input.username, password: input.password })).status,
    ).toBe(200);
    expect((await t.as(null).post('/v1/auth/verify-email', { token })).status).toBe(400);
  });

  it('verify-email also completes an email change (409 when the address was taken meanwhile) and an email link', async () => {
    const user = await createUser(t.app);
    const change = (email: string) => t.as(user.token).post(`/v1/users/${user.id}/email/request-change`, { email });
    expect((await change('moved@example.org')).status).toBe(200);
    const changeToken = tokenFromMail(await smtp.waitFor('moved@example.org'));
    const changed = await t.as(null).post('/v1/auth/verify-email', { token: changeToken });
    expect(changed.body).toEqual({
      success: true,
      message: 'Your new email address is confirmed',
      verification_type: 'email_change',
      user_id: user.id,
      redirect_url: 'https://app.waygate.test/account',
    });

    expect((await change('contested@example.org')).status).toBe(200);
    const contestedToken = tokenFromMail(await smtp.waitFor('contested@example.org'));
    await t.database.db.transaction().execute((trx) =>
      t.app.services.users.createEmailUser(trx, {
        email: 'contested@example.org',
        username: 'contender',
        password: 'long enough pw',
      }),
    );
    expect((await t.as(null).post('/v1/auth/verify-email', { token: contestedToken })).body).toEqual({
      error: 'Conflict',
      message: 'Email is already in use',
      code: 'user.email_in_use',
    });

    // An OAuth-only user adds email sign-in.
    await t.database.db
      .insertInto('platforms')
      .values({ name: 'Forge', slug: 'forge', is_oauth: true })
      .onConflict((oc) => oc.column('slug').doNothing())
      .execute();
    const oauth = await t
      .as(TEST_SYSTEM_KEY)
      .post('/v1/users/oauth', {
        email: null,
        name: 'Link Me',
        oauthProvider: 'forge',
        oauthProviderId: 'forge-link-1',
        image: null,
      })
      .expect(200);
    const linkUserId = oauth.body.data.id;
    const admin = await login(t.app, TEST_ADMIN.username, TEST_ADMIN.password);
    const linkRequest = await t
      .as(admin)
      .post(`/v1/users/${linkUserId}/email-link/request`, { email: 'linked@example.org', password: 'linked password' });
    expect(linkRequest.status).toBe(200);
    const linked = await t.as(null).post('/v1/auth/verify-email', {
      token: tokenFromMail(await smtp.waitFor('linked@example.org')),
    });
    expect(linked.body).toMatchObject({ success: true, verification_type: 'email_link', user_id: linkUserId });
    expect(
      (await t.as(null).post('/v1/auth/login', { identifier: 'linked@example.org', password: 'linked password' }))
        .status,
    ).toBe(200);
  });

  it('refuses unknown and expired tokens with 400', async () => {
    expect((await t.as(null).post('/v1/auth/verify-email', { token: 'no-such-token' })).body).toEqual({
      error: 'BadRequest',
      message: 'Invalid or expired token',
      code: 'mailed_token.invalid',
    });
    expect((await t.as(null).post('/v1/auth/register/verify', { token: 'no-such-token' })).status).toBe(400);
    const { input, token } = await registerAndGetToken();
    // A day later (the app's clock moves; the test does not wait).
    const aDay = 24 * 3600_000 + 1000;
    t.clock.advance(aDay);
    try {
      expect((await t.as(null).post('/v1/auth/register/verify', { token })).status).toBe(400);
      // An expired registration no longer holds the email or username.
      expect((await t.as(null).post('/v1/auth/register', input)).status).toBe(200);
    } finally {
      t.clock.advance(-aDay);
    }
  });

  it.each([
    [
      { username: 'ab' },
      'username must be 3-30 characters of letters, digits and underscores',
      'user.invalid_username',
    ],
    [
      { username: 'a'.repeat(31) },
      'username must be 3-30 characters of letters, digits and underscores',
      'user.invalid_username',
    ],
    [
      { username: 'bad-name' },
      'username must be 3-30 characters of letters, digits and underscores',
      'user.invalid_username',
    ],
    [{ password: 'short12' }, 'password must be at least 8 characters', 'user.password_too_short'],
    [{ email: 'not-an-email' }, 'email is not a valid email address', 'user.invalid_email'],
  ])('400 for %j', async (change, message, code) => {
    const response = await t.as(null).post('/v1/auth/register', { ...fresh(), ...change });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: 'BadRequest', message, code });
  });

  it('400 for a missing field, naming it', async () => {
    const { password: _, ...input } = fresh();
    const response = await t.as(null).post('/v1/auth/register', unchecked(input)).expect(400);
    expect(response.body.message).toContain('password');
  });

  it('409 when the email is registered, the username taken, or a registration is pending', async () => {
    const taken = [
      [{ ...fresh(), email: TEST_ADMIN.email.toUpperCase() }, 'Email is already registered', 'user.email_registered'],
      [{ ...fresh(), username: 'Admin' }, 'Username is already taken', 'user.username_taken'],
    ] as const;
    for (const [input, message, code] of taken) {
      expect((await t.as(null).post('/v1/auth/register', input)).body).toEqual({ error: 'Conflict', message, code });
    }
    const { input } = await registerAndGetToken();
    const sameEmail = await t.as(null).post('/v1/auth/register', { ...fresh(), email: input.email });
    expect(sameEmail.status).toBe(409);
    expect(sameEmail.body.message).toMatch(/registration for this email is already waiting/);
    const sameName = await t.as(null).post('/v1/auth/register', { ...fresh(), username: input.username });
    expect(sameName.status).toBe(409);
    expect(sameName.body.message).toMatch(/registration for this username is already waiting/);
  });

  it('409 on verify when the username was taken meanwhile; the pending row is kept for nobody', async () => {
    const { input, token } = await registerAndGetToken();
    await t.database.db.transaction().execute((trx) =>
      t.app.services.users.createEmailUser(trx, {
        email: 'other@example.org',
        username: input.username,
        password: 'another password',
      }),
    );
    const response = await t.as(null).post('/v1/auth/register/verify', { token });
    expect(response.status).toBe(409);
    expect(response.body).toEqual({
      error: 'Conflict',
      message: 'Username is already taken',
      code: 'user.username_taken',
    });
  });

  it('409 on register/verify and verify-email when the email (an administrator moved another account to it) or the username was taken meanwhile', async () => {
    const admin = await login(t.app, TEST_ADMIN.username, TEST_ADMIN.password);
    for (const url of ['/v1/auth/register/verify', '/v1/auth/verify-email'] as const) {
      const { input, token } = await registerAndGetToken();
      const other = await createUser(t.app);
      const moved = await t.as(admin).patch(`/v1/users/${other.id}`, { email: input.email });
      expect(moved.status).toBe(200);
      const response = await t.as(null).post(url, { token });
      expect(response.body).toEqual({
        error: 'Conflict',
        message: 'Email is already registered',
        code: 'user.email_registered',
      });
    }
    const { input, token } = await registerAndGetToken();
    await t.database.db.transaction().execute((trx) =>
      t.app.services.users.createEmailUser(trx, {
        email: 'name.taker@example.org',
        username: input.username,
        password: 'another password',
      }),
    );
    expect((await t.as(null).post('/v1/auth/verify-email', { token })).body).toEqual({
      error: 'Conflict',
      message: 'Username is already taken',
      code: 'user.username_taken',
    });
  });

  it('400 when registration is switched off', async () => {
    const closed = await buildTestApp({ config: { smtpUrl: smtp.url, registrationEnabled: false } });
    try {
      const response = await closed.as(null).post('/v1/auth/register', fresh());
      expect(response.status).toBe(400);
      expect(response.body).toEqual({
        error: 'BadRequest',
        message: 'Registration is disabled',
        code: 'registration.disabled',
      });
    } finally {
      await closed.close();
    }
  });

  it('400 while the email platform is disabled or closed for registration', async () => {
    const admin = await login(t.app, TEST_ADMIN.username, TEST_ADMIN.password);
    for (const setting of ['registration_enabled', 'enabled']) {
      const patch = (value: boolean) => t.as(admin).patch('/v1/platforms/email/settings', { [setting]: value });
      expect((await patch(false)).status).toBe(200);
      const response = await t.as(null).post('/v1/auth/register', fresh());
      expect(response.body).toEqual({
        error: 'BadRequest',
        message: 'Registration is disabled',
        code: 'registration.disabled',
      });
      expect((await patch(true)).status).toBe(200);
    }
    expect((await t.as(null).post('/v1/auth/register', fresh())).status).toBe(200);
  });

  it('500 when the verification mail cannot be sent, and the pending row is rolled back', async () => {
    const broken = await buildTestApp({ config: { smtpUrl: 'smtp://127.0.0.1:1' } });
    try {
      const input = fresh();
      const response = await broken.as(null).post('/v1/auth/register', input);
      expect(response.status).toBe(500);
      expect(response.body).toEqual({
        error: 'InternalServerError',
        message: 'The verification email could not be sent; please try again later',
        code: 'mail.not_sent',
      });
      const rows = await broken.database.db.selectFrom('pending_registrations').select('id').execute();
      expect(rows).toEqual([]);
    } finally {
      await broken.close();
    }
  });

  it('signin and validate are 501 stubs', async () => {
    for (const url of ['/v1/auth/signin', '/v1/auth/validate'] as const) {
      const response = await t.as(null).post(url);
      expect(response.status).toBe(501);
      expect(response.body).toEqual({ message: 'Not implemented' });
    }
  });
});

describe('bot protection on register and password reset', () => {
  let verifier: FakeBotVerifier;
  let smtp: FakeSmtp;
  let t: TestApp;
  beforeAll(async () => {
    [verifier, smtp] = await Promise.all([startFakeBotVerifier(), startFakeSmtp()]);
    t = await buildTestApp({
      config: { smtpUrl: smtp.url, botProtection: { secret: 'bot-secret', verifyUrl: verifier.url } },
    });
  });
  afterAll(async () => {
    await t.close();
    await Promise.all([verifier.close(), smtp.close()]);
  });

  const cases = [
    ['/v1/auth/register', { email: 'bot@example.org', username: 'bot_user', password: 'long enough pw' }],
    ['/v1/auth/reset-password', { email: TEST_ADMIN.email }],
    ['/v1/auth/reset-password/complete', { token: 'whatever', new_password: 'long enough pw' }],
  ] as const;

  it.each(cases)('%s: 400 without or with a failing turnstile_token', async (url, body) => {
    const missing = await t.as(null).post(url, body);
    expect(missing.body).toEqual({
      error: 'BadRequest',
      message: 'turnstile_token is required',
      code: 'bot_check.token_missing',
    });
    const failing = await t.as(null).post(url, { ...body, turnstile_token: 'robot' });
    expect(failing.body).toEqual({ error: 'BadRequest', message: 'Bot check failed', code: 'bot_check.failed' });
  });

  it('a passing token lets register through and is verified with the secret', async () => {
    const response = await t.as(null).post('/v1/auth/register', { ...cases[0][1], turnstile_token: 'human' });
    expect(response.status).toBe(200);
    expect(verifier.requests.at(-1)).toMatchObject({ secret: 'bot-secret', response: 'human', remoteip: '127.0.0.1' });
  });
});
