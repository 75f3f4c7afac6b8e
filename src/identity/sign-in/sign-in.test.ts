import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeBotVerifier } from '../../../test/fakes/bot-verifier.js';
import { hashPassword } from '../../platform/auth/passwords.js';
import { unchecked } from '../../../test/client.js';
import {
  buildTestApp,
  createApiKey,
  createUser,
  expectExpiresIn,
  login,
  signedInBody,
  TEST_ADMIN,
  type TestApp,
} from '../../../test/helpers.js';

describe('login and logout', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(() => t.close());

  const loginRequest = (identifier: string, password: string, headers: Record<string, string> = {}) =>
    t.as(null).post('/v1/auth/login', { identifier, password }, { headers });

  const auditEvents = (eventType: string) =>
    t.database.db
      .selectFrom('audit_events')
      .selectAll()
      .where('event_type', '=', eventType)
      .orderBy('created_at')
      .execute();

  it('signs in by username and answers an AuthResponse with a 30-day ses_ session', async () => {
    const { body } = await loginRequest('admin', TEST_ADMIN.password, { 'user-agent': 'login-test' }).expect(200);
    expect(body).toEqual(signedInBody({ email: TEST_ADMIN.email, username: 'admin' }));
    expectExpiresIn(body.expires_at!, 30 * 24);
    const [event] = (await auditEvents('login')).filter((e) => e.resource_id === body.session_id);
    expect(event).toMatchObject({
      user_id: body.user_id,
      status: 'success',
      user_agent: 'login-test',
      ip_address: '127.0.0.1',
    });
  });

  it('matches the email account case-insensitively', async () => {
    const response = await loginRequest('  ADMIN@Waygate.Test ', TEST_ADMIN.password).expect(200);
    expect(response.body.username).toBe('admin');
  });

  it('stores only the hash of the session token', async () => {
    const token = await login(t.app, 'admin', TEST_ADMIN.password);
    const rows = await t.database.db.selectFrom('sessions').select('token_hash').execute();
    expect(rows.map((r) => r.token_hash)).not.toContain(token);
    expect(rows.every((r) => /^[0-9a-f]{64}$/.test(r.token_hash))).toBe(true);
  });

  it.each([
    ['a wrong password', 'admin', 'not-the-password'],
    ['an unknown username', 'nobody_here', 'whatever-password'],
    ['an unknown email', 'nobody@example.org', 'whatever-password'],
  ])('refuses %s with the same 401 and records login_failed', async (_case, identifier, password) => {
    const before = (await auditEvents('login_failed')).length;
    const response = await loginRequest(identifier, password);
    expect(response.status).toBe(401);
    expect(response.body).toEqual({
      error: 'Unauthorized',
      message: 'Invalid credentials',
      code: 'login.invalid_credentials',
    });
    const events = await auditEvents('login_failed');
    expect(events).toHaveLength(before + 1);
    expect(events.at(-1)).toMatchObject({ status: 'failure' });
  });

  it('records the user on a failed login of a known account', async () => {
    const user = await createUser(t.app);
    await loginRequest(user.username, 'wrong-password').expect(401);
    expect((await auditEvents('login_failed')).at(-1)).toMatchObject({
      user_id: user.id,
      error_message: 'wrong password',
    });
  });

  it('refuses a deleted user by email as an unknown one', async () => {
    const user = await createUser(t.app);
    await t.database.db.updateTable('users').set({ deleted_at: t.clock.now() }).where('id', '=', user.id).execute();
    const response = await loginRequest(`${user.username}@example.org`, user.password);
    expect(response.status).toBe(401);
    expect((await auditEvents('login_failed')).at(-1)).toMatchObject({
      user_id: null,
      error_message: 'unknown identifier',
    });
  });

  it('checks the password of the email account named, when a user has two', async () => {
    const user = await createUser(t.app);
    const { id: platformId } = await t.database.db
      .selectFrom('platforms')
      .select('id')
      .where('slug', '=', 'email')
      .executeTakeFirstOrThrow();
    const second = `second_${user.username}@example.org`;
    await t.database.db
      .insertInto('platform_accounts')
      .values({
        user_id: user.id,
        platform_id: platformId,
        platform_user_id: second,
        email: second,
        password_hash: await hashPassword('second-password-1'),
      })
      .execute();
    expect((await loginRequest(second, 'second-password-1')).status).toBe(200);
    expect((await loginRequest(`${user.username}@example.org`, user.password)).status).toBe(200);
    expect((await loginRequest(second, user.password)).status).toBe(401);
  });

  it('refuses a user without an email account, by username, as a wrong password would be', async () => {
    const user = await createUser(t.app);
    await t.database.db.deleteFrom('platform_accounts').where('user_id', '=', user.id).execute();
    const response = await loginRequest(user.username, user.password);
    expect(response.status).toBe(401);
    expect(response.body).toMatchObject({ code: 'login.invalid_credentials' });
    expect((await auditEvents('login_failed')).at(-1)).toMatchObject({
      user_id: user.id,
      error_message: 'no password sign-in',
    });
  });

  it('refuses the right password while email sign-in is disabled, and signs in again once it is enabled', async () => {
    const admin = await login(t.app, 'admin', TEST_ADMIN.password);
    const user = await createUser(t.app);
    const setEnabled = (enabled: boolean) => t.as(admin).patch('/v1/platforms/email/enabled', { enabled });
    expect((await setEnabled(false)).status).toBe(200);
    try {
      const refused = await loginRequest(user.username, user.password);
      expect(refused.status).toBe(401);
      expect((await auditEvents('login_failed')).at(-1)).toMatchObject({
        user_id: user.id,
        error_message: 'email sign-in disabled',
      });
    } finally {
      expect((await setEnabled(true)).status).toBe(200);
    }
    expect((await loginRequest(user.username, user.password)).status).toBe(200);
  });

  it('rejects a login body without identifier with 400 naming the field', async () => {
    const response = await t.as(null).post('/v1/auth/login', unchecked({ password: 'x' }));
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      error: 'BadRequest',
      message: "Body field 'identifier' is required",
      code: 'request.validation',
    });
  });

  it('logs out: the session is refused on the very next request and a logout event is written', async () => {
    const user = await createUser(t.app);
    const rolesUrl = `/v1/users/${user.id}/roles` as const;
    expect((await t.as(user.token).get(rolesUrl)).status).toBe(200);
    const logout = await t.as(user.token).post('/v1/auth/logout');
    expect(logout.status).toBe(200);
    expect(logout.body).toEqual({ message: 'Logged out' });
    const after = await t.as(user.token).get(rolesUrl);
    expect(after.status).toBe(401);
    expect(after.body).toEqual({
      error: 'Unauthorized',
      message: 'Invalid or missing authentication token',
      code: 'auth.unauthorized',
    });
    expect((await auditEvents('logout')).at(-1)).toMatchObject({ user_id: user.id });
  });

  it('answers logout without a session token with 401', async () => {
    const none = await t.as(null).post('/v1/auth/logout');
    expect(none.status).toBe(401);
    const admin = await login(t.app, 'admin', TEST_ADMIN.password);
    const { key } = await createApiKey(t.app, admin, { name: 'not a session' });
    const withKey = await t.as(key).post('/v1/auth/logout');
    expect(withKey.status).toBe(401);
  });
});

describe('bootstrap', () => {
  it('creates the super admin once and never resets the password on a later start', async () => {
    const t = await buildTestApp();
    try {
      const admin = await login(t.app, 'admin', TEST_ADMIN.password);
      expect((await t.as(admin).get('/v1/roles')).status).toBe(200);
      const { buildApp } = await import('../../app.js');
      const restarted = await buildApp(
        { ...t.config, bootstrapAdmin: { ...TEST_ADMIN, password: 'a-different-password' } },
        { database: t.database, kv: t.kv },
        { logger: false },
      );
      expect(await login(restarted, 'admin', TEST_ADMIN.password)).toMatch(/^ses_/);
      const users = await t.database.db.selectFrom('users').select('id').execute();
      expect(users).toHaveLength(1);
      await restarted.close();
    } finally {
      await t.close();
    }
  });

  it('refuses to start, naming the setting, when the bootstrap email belongs to a deleted user', async () => {
    const t = await buildTestApp();
    try {
      await t.database.db.updateTable('users').set({ deleted_at: new Date() }).execute();
      const { buildApp } = await import('../../app.js');
      await expect(buildApp(t.config, { database: t.database, kv: t.kv }, { logger: false })).rejects.toThrow(
        'BOOTSTRAP_ADMIN_*: This email belongs to a deleted user; choose another address',
      );
    } finally {
      await t.close();
    }
  });
});

describe('bot protection on login', () => {
  let verifier: Awaited<ReturnType<typeof startFakeBotVerifier>>;
  let t: TestApp;
  beforeAll(async () => {
    verifier = await startFakeBotVerifier();
    t = await buildTestApp({ config: { botProtection: { secret: 'bot-secret', verifyUrl: verifier.url } } });
  });
  afterAll(async () => {
    await t.close();
    await verifier.close();
  });

  const attempt = (body: { turnstile_token?: string }) =>
    t.as(null).post('/v1/auth/login', { identifier: 'admin', password: TEST_ADMIN.password, ...body });

  it('requires turnstile_token', async () => {
    const response = await attempt({});
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      error: 'BadRequest',
      message: 'turnstile_token is required',
      code: 'bot_check.token_missing',
    });
  });

  it('refuses a token the verifier rejects with 400', async () => {
    const response = await attempt({ turnstile_token: 'robot' });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: 'BadRequest', message: 'Bot check failed', code: 'bot_check.failed' });
  });

  it('signs in with a token the verifier accepts, sending secret, response and remoteip', async () => {
    const response = await attempt({ turnstile_token: 'human' });
    expect(response.status).toBe(200);
    expect(verifier.requests.at(-1)).toEqual({ secret: 'bot-secret', response: 'human', remoteip: '127.0.0.1' });
  });

  it('fails closed with 503 when the verifier cannot be reached', async () => {
    const offline = await buildTestApp({
      config: { botProtection: { secret: 'bot-secret', verifyUrl: 'http://127.0.0.1:1/siteverify' } },
    });
    try {
      const response = await offline
        .as(null)
        .post('/v1/auth/login', { identifier: 'admin', password: 'x', turnstile_token: 'human' })
        .expect(503);
      expect(response.body).toEqual({
        error: 'ServiceUnavailable',
        message: 'The bot check is unavailable; try again shortly',
        code: 'bot_check.unavailable',
      });
    } finally {
      await offline.close();
    }
  });

  it('ignores the field when bot protection is off', async () => {
    const plain = await buildTestApp();
    try {
      const response = await plain
        .as(null)
        .post('/v1/auth/login', { identifier: 'admin', password: TEST_ADMIN.password, turnstile_token: 'anything' });
      expect(response.status).toBe(200);
    } finally {
      await plain.close();
    }
  });
});
