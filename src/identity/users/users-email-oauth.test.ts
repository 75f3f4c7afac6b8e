import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { unchecked, type RequestBody } from '../../../test/client.js';
import {
  buildMailingTestApp,
  buildTestApp,
  createUser,
  forbidden,
  login,
  TEST_ADMIN,
  TEST_SYSTEM_KEY,
  UNAUTHORIZED,
  type TestApp,
} from '../../../test/helpers.js';
import { tokenFromMail, type FakeSmtp } from '../../../test/fakes/smtp.js';
import { usernameBase } from './oauth.js';

type TestUser = Awaited<ReturnType<typeof createUser>>;

const USER_NOT_FOUND = { error: 'NotFound', message: 'User not found', code: 'user.not_found' };
const INVALID_TOKEN = { error: 'BadRequest', message: 'Invalid or expired token', code: 'mailed_token.invalid' };
const IN_USE = { error: 'Conflict', message: 'Email is already in use', code: 'user.email_in_use' };
const SYSTEM_ONLY = {
  error: 'Unauthorized',
  message: 'This endpoint requires the system API key',
  code: 'oauth_sign_in.system_key_only',
};
const ISO = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/);

function expectResponse(response: { status: number; body: unknown }, status: number, body?: unknown) {
  expect({ status: response.status, body: body === undefined ? undefined : response.body }).toEqual({
    status,
    body,
  });
}

const emailOf = (user: TestUser) => `${user.username}@example.org`;

/** OAuth providers exist only once the login-providers module seeds them (OAUTH_PLATFORMS); tests add their own. */
async function addPlatform(
  t: TestApp,
  slug: string,
  options: { enabled?: boolean; is_oauth?: boolean; registration_enabled?: boolean } = {},
) {
  await t.database.db
    .insertInto('platforms')
    .values({
      name: slug,
      slug,
      is_oauth: options.is_oauth ?? true,
      enabled: options.enabled ?? true,
      registration_enabled: options.registration_enabled ?? true,
    })
    // The common providers ship disabled: a test that names one sets it as it needs it.
    .onConflict((oc) =>
      oc.column('slug').doUpdateSet({
        is_oauth: options.is_oauth ?? true,
        enabled: options.enabled ?? true,
        registration_enabled: options.registration_enabled ?? true,
      }),
    )
    .execute();
}

describe('email change', () => {
  let t: TestApp;
  let smtp: FakeSmtp;
  let admin: string;
  let alice: TestUser;
  let bob: TestUser;

  // A fresh app per test: the tests move alice's address and expect others to find it taken or free.
  beforeEach(async () => {
    ({ t, smtp } = await buildMailingTestApp({ config: { publicUrl: 'https://id.example.org' } }));
    admin = await login(t.app, TEST_ADMIN.username, TEST_ADMIN.password);
    alice = await createUser(t.app);
    bob = await createUser(t.app);
  });
  afterEach(() => t.close());

  const requestChange = (id: string, token: string | null, email: string) =>
    t.as(token).post(`/v1/users/${id}/email/request-change`, { email });
  const verify = (token: string, credential: string = alice.token) =>
    t.as(credential).post('/v1/users/email/verify', { token });
  const pending = (id: string, token: string) => t.as(token).get(`/v1/users/${id}/email/pending`);

  it('mails a 24-hour link to the new address; following it changes the sign-in address', async () => {
    const before = Date.now();
    const response = await requestChange(alice.id, alice.token, 'Alice.New@Example.org').expect(200);
    expect(response.body).toEqual({
      message: 'A verification link was sent to the new address; the change takes effect when it is opened',
      expires_at: ISO,
    });
    const expiresAt = new Date(response.body.expires_at).getTime();
    expect(expiresAt - before).toBeGreaterThanOrEqual(24 * 3600 * 1000 - 1000);
    expect(expiresAt - before).toBeLessThanOrEqual(24 * 3600 * 1000 + 5000);

    const mail = await smtp.waitFor('alice.new@example.org');
    expect(mail.subject).toBe('Confirm your new email address for Waygate');
    expect(mail.text).toContain('https://id.example.org/verify-email?token=');
    expectResponse(await pending(alice.id, alice.token), 200, {
      pending: true,
      new_email: 'alice.new@example.org',
      expires_at: response.body.expires_at,
    });

    const token = tokenFromMail(mail);
    const stored = await t.database.db
      .selectFrom('account_tokens')
      .select('token_hash')
      .where('user_id', '=', alice.id)
      .executeTakeFirstOrThrow();
    expect(stored.token_hash).not.toBe(token);

    expectResponse(await verify(token), 200, { success: true, message: 'The email address was changed' });
    const notice = await smtp.waitFor(emailOf(alice), (m) => /was changed/.test(m.subject));
    expect(notice.subject).toBe('The email address of your Waygate account was changed');
    expect(notice.text).toContain('changed to alice.new@example.org');
    expect(notice.text).not.toMatch(/token=/);
    expect(await login(t.app, 'alice.new@example.org', alice.password)).toMatch(/^ses_/);
    await expect(login(t.app, emailOf(alice), alice.password)).rejects.toThrow(/401/);
    expectResponse(await pending(alice.id, alice.token), 200, { pending: false, new_email: null, expires_at: null });
    expectResponse(await verify(token), 400, INVALID_TOKEN);
    const events = await t.database.db
      .selectFrom('audit_events')
      .select('metadata')
      .where('event_type', '=', 'user_updated')
      .where('user_id', '=', alice.id)
      .execute();
    expect(events.map((e) => e.metadata)).toEqual([{ fields: ['email'], via: 'email_change' }]);
  });

  it('checks the address, the account kind, the user and the caller', async () => {
    expectResponse(await requestChange(bob.id, bob.token, 'nope'), 400, {
      error: 'BadRequest',
      message: 'email is not a valid email address',
      code: 'user.invalid_email',
    });
    expectResponse(await requestChange(bob.id, bob.token, emailOf(bob)), 400, {
      error: 'BadRequest',
      message: 'email is already the address of this account',
      code: 'email_change.same_address',
    });
    expectResponse(await requestChange(bob.id, bob.token, emailOf(alice)), 409, IN_USE);
    expectResponse(await requestChange(randomUUID(), admin, 'someone@example.org'), 404, USER_NOT_FOUND);
    expectResponse(
      await requestChange(bob.id, alice.token, 'bob.elsewhere@example.org'),
      403,
      forbidden('users:write'),
    );
    expectResponse(await requestChange(bob.id, null, 'bob.elsewhere@example.org'), 401, UNAUTHORIZED);
    expectResponse(await t.as(bob.token).post(`/v1/users/${bob.id}/email/request-change`, unchecked({})), 400, {
      error: 'BadRequest',
      message: "Body field 'email' is required",
      code: 'request.validation',
    });

    await addPlatform(t, 'github');
    const social = await t
      .as(TEST_SYSTEM_KEY)
      .post('/v1/users/oauth', {
        email: null,
        name: 'Social Only',
        oauthProvider: 'github',
        oauthProviderId: 'gh-social-1',
        image: null,
      })
      .expect(200);
    expectResponse(await requestChange(social.body.data.id, admin, 'social@example.org'), 400, {
      error: 'BadRequest',
      message: 'Email change is only for accounts created with email; this user has no email/password account',
      code: 'email_change.no_email_account',
    });
  });

  it('an administrator may start the change for another user; the mail goes to the new address', async () => {
    expect((await requestChange(bob.id, admin, 'bob.by.admin@example.org')).status).toBe(200);
    expect((await smtp.waitFor('bob.by.admin@example.org')).subject).toBe('Confirm your new email address for Waygate');
    expect((await pending(bob.id, admin).expect(200)).body.new_email).toBe('bob.by.admin@example.org');
    expectResponse(await pending(bob.id, alice.token), 403, forbidden('users:read'));
    expectResponse(await pending(randomUUID(), admin), 404, USER_NOT_FOUND);
  });

  it('a new request replaces the older one; cancelling removes it (404 when nothing is pending)', async () => {
    await requestChange(bob.id, bob.token, 'bob.first@example.org');
    const first = tokenFromMail(await smtp.waitFor('bob.first@example.org'));
    await requestChange(bob.id, bob.token, 'bob.second@example.org');
    const second = tokenFromMail(await smtp.waitFor('bob.second@example.org'));
    expectResponse(await verify(first, bob.token), 400, INVALID_TOKEN);

    expectResponse(await t.as(alice.token).delete(`/v1/users/${bob.id}/email/pending`), 403, forbidden('users:write'));
    expectResponse(await t.as(bob.token).delete(`/v1/users/${bob.id}/email/pending`), 200, {
      success: true,
      message: 'The pending email change was cancelled',
    });
    expectResponse(await t.as(bob.token).delete(`/v1/users/${bob.id}/email/pending`), 404, {
      error: 'NotFound',
      message: 'No pending email change',
      code: 'email_change.none_pending',
    });
    expectResponse(await t.as(admin).delete(`/v1/users/${randomUUID()}/email/pending`), 404, USER_NOT_FOUND);
    expectResponse(await verify(second, bob.token), 400, INVALID_TOKEN);
    expect(await login(t.app, emailOf(bob), bob.password)).toMatch(/^ses_/);
  });

  it('verification: 409 when the address was taken meanwhile, 400 when expired, 401 without a credential', async () => {
    const carol = await createUser(t.app);
    const dave = await createUser(t.app);
    await requestChange(carol.id, carol.token, 'contested@example.org');
    const token = tokenFromMail(await smtp.waitFor('contested@example.org'));
    expect((await t.as(admin).patch(`/v1/users/${dave.id}`, { email: 'contested@example.org' })).status).toBe(200);
    expectResponse(await verify(token, carol.token), 409, IN_USE);
    // Any credential may present the token (the token is the proof); the answer is the same.
    expectResponse(await verify(token, admin), 409, IN_USE);
    expectResponse(await t.as(null).post('/v1/users/email/verify', { token }), 401, UNAUTHORIZED);

    await requestChange(carol.id, carol.token, 'carol.later@example.org');
    const late = tokenFromMail(await smtp.waitFor('carol.later@example.org'));
    // A day later (the app's clock moves; the test does not wait).
    const aDay = 24 * 3600_000 + 1000;
    t.clock.advance(aDay);
    try {
      expectResponse(await verify(late, carol.token), 400, INVALID_TOKEN);
      expectResponse(await pending(carol.id, carol.token), 200, { pending: false, new_email: null, expires_at: null });
    } finally {
      t.clock.advance(-aDay);
    }
    expectResponse(await verify('made-up-token', carol.token), 400, INVALID_TOKEN);
  });

  it('the service function behind POST /v1/auth/verify-email completes a change too', async () => {
    const erin = await createUser(t.app);
    await requestChange(erin.id, erin.token, 'erin.moved@example.org');
    const token = tokenFromMail(await smtp.waitFor('erin.moved@example.org'));
    const request = { ip: '127.0.0.1', headers: {} } as Parameters<typeof t.app.services.users.completeEmailChange>[0];
    expect(await t.app.services.users.completeEmailChange(request, token)).toEqual({ userId: erin.id });
    expect(await login(t.app, 'erin.moved@example.org', erin.password)).toMatch(/^ses_/);
  });
});

describe('email change when the mail cannot be sent', () => {
  let t: TestApp;
  beforeAll(async () => {
    // Nothing listens on port 9 of loopback: every send fails.
    t = await buildTestApp({ config: { smtpUrl: 'smtp://127.0.0.1:9' } });
  });
  afterAll(() => t.close());

  it('answers 500 with a clear message and keeps no token', async () => {
    const user = await createUser(t.app);
    const response = await t.as(user.token).post(`/v1/users/${user.id}/email/request-change`, {
      email: 'lost@example.org',
    });
    expectResponse(response, 500, {
      error: 'InternalServerError',
      message: 'The verification email could not be sent; please try again later',
      code: 'mail.not_sent',
    });
    expect(
      await t.database.db.selectFrom('account_tokens').select('id').where('user_id', '=', user.id).execute(),
    ).toEqual([]);
    expectResponse(await t.as(user.token).get(`/v1/users/${user.id}/email/pending`), 200, {
      pending: false,
      new_email: null,
      expires_at: null,
    });
  });
});

describe('POST /v1/users/oauth and GET /v1/users/email/{email}', () => {
  let t: TestApp;
  let admin: string;
  let alice: TestUser;

  // A fresh app per test: the tests derive usernames from the same names and link the same
  // addresses, so each needs a directory in which no other test has signed anyone up.
  beforeEach(async () => {
    t = await buildTestApp();
    admin = await login(t.app, TEST_ADMIN.username, TEST_ADMIN.password);
    alice = await createUser(t.app);
    await addPlatform(t, 'github');
    await addPlatform(t, 'gitlab');
    await addPlatform(t, 'closed', { enabled: false });
    await addPlatform(t, 'invite_only', { registration_enabled: false });
  });
  afterEach(() => t.close());

  const oauth = (body: RequestBody<'post', '/v1/users/oauth'>, token: string = TEST_SYSTEM_KEY) =>
    t.as(token).post('/v1/users/oauth', body);
  const identity = (overrides: object = {}) => ({
    email: 'Jane.Doe@Example.org',
    name: 'Jane Doe',
    oauthProvider: 'github',
    oauthProviderId: 'gh-1001',
    image: 'https://avatars.example.org/jane.png',
    ...overrides,
  });
  const flat = (extra: Record<string, unknown>) => ({
    id: expect.any(String),
    primary_platform_account_id: expect.any(String),
    created_at: ISO,
    updated_at: ISO,
    last_login_at: ISO,
    privacy_mode: false,
    is_banned: false,
    ...extra,
  });

  it('creates a user with role_user for a new identity, then updates the same account', async () => {
    const created = await oauth(identity()).expect(200);
    expect(created.body).toEqual({
      data: flat({
        username: 'jane_doe',
        email: 'jane.doe@example.org',
        avatar_url: 'https://avatars.example.org/jane.png',
        platform: 'github',
      }),
    });
    const id = created.body.data.id;
    expect(await t.app.services.access.userHoldsRole(id, 'role_user')).toBe(true);
    const events = await t.database.db
      .selectFrom('audit_events')
      .select(['event_type', 'metadata'])
      .where('user_id', '=', id)
      .execute();
    expect(events).toEqual([{ event_type: 'user_created', metadata: { provider: 'github' } }]);

    const again = await oauth(identity({ name: 'Jane D.', image: 'https://avatars.example.org/jane2.png' })).expect(
      200,
    );
    expect(again.body.data).toEqual(
      flat({
        id,
        username: 'jane_doe',
        email: 'jane.doe@example.org',
        avatar_url: 'https://avatars.example.org/jane2.png',
        platform: 'github',
      }),
    );
    expect(again.body.data.primary_platform_account_id).toBe(created.body.data.primary_platform_account_id);
    const reconnected = await t.database.db
      .selectFrom('audit_events')
      .select(['event_type', 'resource_id', 'metadata'])
      .where('user_id', '=', id)
      .where('event_type', '=', 'account_reconnected')
      .execute();
    expect(reconnected).toEqual([
      {
        event_type: 'account_reconnected',
        resource_id: created.body.data.primary_platform_account_id,
        metadata: { provider: 'github' },
      },
    ]);

    const profile = await t.as(admin).get(`/v1/users/${id}/profile`);
    expect(profile.body).toMatchObject({
      name: 'jane_doe',
      display_name: 'Jane D.',
      picture: 'https://avatars.example.org/jane2.png',
      provider: 'github',
      primary_provider: 'github',
    });
  });

  it('links a new identity to the user who already has that email, on any platform', async () => {
    const first = (
      await oauth(identity({ oauthProviderId: 'gh-2002', email: 'sam@example.org', name: 'Sam' })).expect(200)
    ).body.data;
    const linked = await oauth(
      identity({ oauthProvider: 'gitlab', oauthProviderId: 'gl-77', email: 'SAM@example.org', name: 'Sam G' }),
    ).expect(200);
    expect(linked.body.data).toMatchObject({
      id: first.id,
      username: first.username,
      platform: 'gitlab',
      primary_platform_account_id: first.primary_platform_account_id,
    });
    const events = await t.database.db
      .selectFrom('audit_events')
      .select(['event_type', 'metadata'])
      .where('user_id', '=', first.id)
      .where('event_type', '=', 'account_linked')
      .execute();
    expect(events).toEqual([{ event_type: 'account_linked', metadata: { provider: 'gitlab', matched_by: 'email' } }]);

    // An email/password user's address counts as well.
    const joined = await oauth(identity({ oauthProviderId: 'gh-3003', email: emailOf(alice), name: 'Alice' })).expect(
      200,
    );
    expect(joined.body.data).toMatchObject({ id: alice.id, username: alice.username, platform: 'github' });
  });

  it('derives a free username from the name', async () => {
    expect((await oauth(identity()).expect(200)).body.data.username).toBe('jane_doe');
    expect((await oauth(identity({ oauthProviderId: 'gh-4004', email: null })).expect(200)).body.data.username).toBe(
      'jane_doe_2',
    );
    expect(
      (await oauth(identity({ oauthProviderId: 'gh-4005', email: null, name: 'Al' })).expect(200)).body.data.username,
    ).toBe('al_user');
    expect(usernameBase('Jürgen Müller-Lüdenscheidt')).toBe('jurgen_muller_ludenscheidt');
    expect(usernameBase('!!!')).toBe('user');
    expect(usernameBase('x'.repeat(50))).toHaveLength(30);
  });

  it('stores no avatars for a user who turned them off', async () => {
    const user = (
      await oauth(identity({ oauthProviderId: 'gh-5005', email: 'quiet@example.org', name: 'Quiet' })).expect(200)
    ).body.data;
    expect((await t.as(admin).patch(`/v1/users/${user.id}`, { avatars_enabled: false })).status).toBe(200);
    expect(
      (await oauth(identity({ oauthProviderId: 'gh-5005', email: 'quiet@example.org', name: 'Quiet' })).expect(200))
        .body.data.avatar_url,
    ).toBe(null);
    expect(
      (
        await oauth(
          identity({ oauthProvider: 'gitlab', oauthProviderId: 'gl-5005', email: 'quiet@example.org', name: 'Quiet' }),
        ).expect(200)
      ).body.data.avatar_url,
    ).toBe(null);
  });

  it('refuses unknown, disabled and non-OAuth providers, closed registration, bad input and deleted users', async () => {
    expectResponse(await oauth(identity({ oauthProvider: 'myspace' })), 400, {
      error: 'BadRequest',
      message: "oauthProvider 'myspace' is not a known OAuth provider",
      code: 'oauth_sign_in.unknown_provider',
    });
    expectResponse(await oauth(identity({ oauthProvider: 'email' })), 400, {
      error: 'BadRequest',
      message: "oauthProvider 'email' is not a known OAuth provider",
      code: 'oauth_sign_in.unknown_provider',
    });
    expectResponse(await oauth(identity({ oauthProvider: 'closed' })), 400, {
      error: 'BadRequest',
      message: "Sign-in through 'closed' is disabled",
      code: 'oauth_sign_in.provider_disabled',
    });
    expectResponse(
      await oauth(identity({ oauthProvider: 'invite_only', oauthProviderId: 'io-1', email: 'stranger@example.org' })),
      400,
      {
        error: 'BadRequest',
        message: "Registration through 'invite_only' is disabled",
        code: 'oauth_sign_in.registration_disabled',
      },
    );
    // ...but an existing user may still link that provider.
    expect(
      (
        await oauth(identity({ oauthProvider: 'invite_only', oauthProviderId: 'io-2', email: emailOf(alice) })).expect(
          200,
        )
      ).body.data.id,
    ).toBe(alice.id);

    const { name: _name, ...nameless } = identity();
    expectResponse(await oauth(unchecked(nameless)), 400, {
      error: 'BadRequest',
      message: "Body field 'name' is required",
      code: 'request.validation',
    });
    expectResponse(await oauth(identity({ oauthProviderId: '   ' })), 400, {
      error: 'BadRequest',
      message: 'oauthProviderId must not be empty',
      code: 'oauth_sign_in.provider_id_empty',
    });
    expectResponse(await oauth(identity({ email: 'broken' })), 400, {
      error: 'BadRequest',
      message: 'email is not a valid email address',
      code: 'user.invalid_email',
    });
    expectResponse(await oauth(identity({ image: 'ftp://x/y.png' })), 400, {
      error: 'BadRequest',
      message: 'image must be an http or https URL',
      code: 'user.invalid_url',
    });

    const doomed = (
      await oauth(identity({ oauthProviderId: 'gh-6006', email: 'doomed@example.org', name: 'Doomed' })).expect(200)
    ).body.data;
    expect((await t.as(admin).delete(`/v1/users/${doomed.id}`)).status).toBe(204);
    expectResponse(
      await oauth(identity({ oauthProviderId: 'gh-6006', email: 'doomed@example.org', name: 'Doomed' })),
      403,
      { error: 'Forbidden', message: 'This user account has been deleted', code: 'user.deleted' },
    );
  });

  it('answers 401 to every caller but the system key', async () => {
    expectResponse(await oauth(identity(), admin), 401, SYSTEM_ONLY);
    expectResponse(await oauth(identity(), alice.token), 401, SYSTEM_ONLY);
    expectResponse(await t.as(null).post('/v1/users/oauth', identity()), 401, UNAUTHORIZED);
    expectResponse(await oauth(identity(), 'wg_not_a_real_key'), 401, UNAUTHORIZED);
  });

  it('answers 401 to a caller other than the system key before looking at the body', async () => {
    expectResponse(await oauth(unchecked({}), alice.token), 401, SYSTEM_ONLY);
    expectResponse(await oauth(unchecked({ ...identity(), name: 42 }), admin), 401, SYSTEM_ONLY);
    expectResponse(await t.as(null).post('/v1/users/oauth', unchecked({})), 401, UNAUTHORIZED);
    expect((await oauth(unchecked({}))).status).toBe(400);
  });

  it('PATCH email of a user without an email/password account answers 400 user.no_email_account', async () => {
    const social = (await oauth(identity({ email: null })).expect(200)).body.data;
    expectResponse(await t.as(admin).patch(`/v1/users/${social.id}`, { email: 'social.user@example.org' }), 400, {
      error: 'BadRequest',
      message: 'email can only be changed for accounts created with email; this user has no email/password account',
      code: 'user.no_email_account',
    });
  });

  it('looks users up by email: the system key any address, users only their own', async () => {
    const lookup = (email: string, token: string | null = null) =>
      t.as(token).get(`/v1/users/email/${encodeURIComponent(email)}`);
    await oauth(identity());
    const doomed = (
      await oauth(identity({ oauthProviderId: 'gh-6006', email: 'doomed@example.org', name: 'Doomed' })).expect(200)
    ).body.data;
    expect((await t.as(admin).delete(`/v1/users/${doomed.id}`)).status).toBe(204);
    const own = await lookup(emailOf(alice).toUpperCase(), alice.token);
    expectResponse(own, 200, {
      data: flat({
        id: alice.id,
        username: alice.username,
        email: emailOf(alice),
        avatar_url: null,
        platform: 'email',
      }),
    });
    expectResponse(await lookup(emailOf(alice), TEST_SYSTEM_KEY), 200, own.body);
    expect((await lookup('jane.doe@example.org', TEST_SYSTEM_KEY).expect(200)).body.data).toMatchObject({
      username: 'jane_doe',
      platform: 'github',
    });

    const notYours = {
      error: 'Forbidden',
      message: 'You may only look up your own email address',
      code: 'user.email_lookup_not_own',
    };
    expectResponse(await lookup('jane.doe@example.org', alice.token), 403, notYours);
    // Unknown addresses look the same as others' addresses to a user: no probing who is registered.
    expectResponse(await lookup('nobody@example.org', alice.token), 403, notYours);
    expectResponse(await lookup('nobody@example.org', TEST_SYSTEM_KEY), 404, {
      error: 'NotFound',
      message: 'No user has this email address',
      code: 'user.email_not_found',
    });
    expectResponse(await lookup('doomed@example.org', TEST_SYSTEM_KEY), 404, {
      error: 'NotFound',
      message: 'No user has this email address',
      code: 'user.email_not_found',
    });
    expectResponse(await lookup(emailOf(alice)), 401, UNAUTHORIZED);
    expectResponse(await lookup(emailOf(alice), 'ses_invalid'), 401, UNAUTHORIZED);
  });
});
