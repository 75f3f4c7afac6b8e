import { Validator } from '@seriousme/openapi-schema-validator';
import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type RequestBody } from '../../../test/client.js';
import type { FakeSmtp } from '../../../test/fakes/smtp.js';
import {
  buildMailingTestApp,
  buildTestApp,
  createApiKey,
  createRoleWith,
  createUser,
  login,
  signedInBody,
  TEST_ADMIN,
  TEST_SYSTEM_KEY,
  type TestApp,
  twoNodes,
} from '../../../test/helpers.js';
import { hashBackupCode } from './backup-codes.js';
import { createTwoFactorRepo } from './repo.js';
import { totpCode, totpStepOf } from './totp.js';

/** Codes are computed with otplib, a different TOTP implementation than the service's. */
const codeAt = (secret: string, offsetSteps = 0) =>
  generate({ secret, epoch: Math.floor(Date.now() / 1000) + offsetSteps * 30 });

/** RFC 4648 base32 of raw bytes (the RFC 6238 test secret is ASCII). */
function base32(bytes: Buffer): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const byte of bytes) bits += byte.toString(2).padStart(8, '0');
  return (bits.match(/.{1,5}/g) ?? []).map((chunk) => alphabet[parseInt(chunk.padEnd(5, '0'), 2)]).join('');
}

describe('TOTP (RFC 6238)', () => {
  const secret = base32(Buffer.from('12345678901234567890', 'ascii'));

  it.each([
    [59, '94287082'],
    [1111111109, '07081804'],
    [1111111111, '14050471'],
    [1234567890, '89005924'],
    [2000000000, '69279037'],
    [20000000000, '65353130'],
  ])('matches the Appendix B SHA-1 vector at T=%i', (seconds, expected) => {
    expect(totpCode(secret, seconds * 1000, 8)).toBe(expected);
  });

  it('accepts one step of drift either way, nothing further, and names the step', () => {
    const now = 1_700_000_000_000;
    const step = Math.floor(now / 30_000);
    for (const offset of [-1, 0, 1])
      expect(totpStepOf(secret, totpCode(secret, now + offset * 30_000), now)).toBe(step + offset);
    for (const offset of [-2, 2]) expect(totpStepOf(secret, totpCode(secret, now + offset * 30_000), now)).toBeNull();
    expect(totpStepOf(secret, 'abcdef', now)).toBeNull();
  });
});

describe('two-factor authentication', () => {
  let t: TestApp;
  let smtp: FakeSmtp;
  let admin: string;
  beforeAll(async () => {
    ({ t, smtp } = await buildMailingTestApp());
    admin = await login(t.app, 'admin', TEST_ADMIN.password);
  });
  afterAll(() => t.close());

  const status = (token: string) => t.as(token).get('/v1/users/me/2fa/status');
  const setUp = (token: string, body: RequestBody<'post', '/v1/users/me/2fa/setup'> = {}) =>
    t.as(token).post('/v1/users/me/2fa/setup', body);
  const confirm = (token: string, code: string) => t.as(token).post('/v1/users/me/2fa/verify', { code });
  const disable = (token: string, body: RequestBody<'delete', '/v1/users/me/2fa'>) =>
    t.as(token).delete('/v1/users/me/2fa', { body });
  const regenerate = (token: string, code: string) =>
    t.as(token).post('/v1/users/me/2fa/backup-codes/regenerate', { code });
  const requirement = (token: string) => t.as(token).get('/v1/users/me/2fa/requirement');

  const twoFactorRow = (userId: string) =>
    t.database.db.selectFrom('user_two_factor').selectAll().where('user_id', '=', userId).executeTakeFirst();
  const auditEvents = (eventType: string, userId: string) =>
    t.database.db
      .selectFrom('audit_events')
      .selectAll()
      .where('event_type', '=', eventType)
      .where('user_id', '=', userId)
      .orderBy('created_at')
      .execute();
  /** Lets the next code of the current time step through (as if the next step had come). */
  const forgetUsedStep = (userId: string) =>
    t.database.db.updateTable('user_two_factor').set({ last_used_step: null }).where('user_id', '=', userId).execute();

  /** A signed-in user with 2FA enabled; returns the secret and the backup codes. */
  async function userWith2fa(roles?: string[]) {
    const user = await createUser(t.app, roles);
    const { secret } = (await setUp(user.token).expect(200)).body;
    const verify = await confirm(user.token, await codeAt(secret)).expect(200);
    return { ...user, secret, backupCodes: verify.body.backup_codes };
  }

  it('documents every 2FA route in a valid OpenAPI document', async () => {
    const document = (await t.as(null).raw({ method: 'GET', url: '/v1/openapi.json' })).body;
    const result = await new Validator().validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining([
        '/v1/users/me/2fa/status',
        '/v1/users/me/2fa/requirement',
        '/v1/users/me/2fa/setup',
        '/v1/users/me/2fa/verify',
        '/v1/users/me/2fa',
        '/v1/users/me/2fa/backup-codes/regenerate',
        '/v1/auth/2fa/verify',
        '/v1/auth/2fa/check',
      ]),
    );
  });

  describe('setup and verify', () => {
    it('reports 2FA off for a new user', async () => {
      const user = await createUser(t.app);
      const response = await status(user.token).expect(200);
      expect(response.body).toEqual({
        enabled: false,
        enabled_at: null,
        backup_codes_remaining: 0,
        platform_slug: null,
      });
    });

    it('starts a setup: base32 secret, otpauth URL, PNG data URL, 10-minute expiry, email platform', async () => {
      const user = await createUser(t.app);
      const { body } = await setUp(user.token).expect(200);
      expect(body).toEqual({
        secret: expect.stringMatching(/^[A-Z2-7]{32}$/),
        qr_code_url: expect.stringMatching(new RegExp(`^otpauth://totp/Waygate:${user.username}\\?`)),
        qr_code_image: expect.stringMatching(/^data:image\/png;base64,[A-Za-z0-9+/]+=*$/),
        expires_at: expect.any(String),
        platform_slug: 'email',
      });
      const url = new URL(body.qr_code_url);
      expect(Object.fromEntries(url.searchParams)).toEqual({
        issuer: 'Waygate',
        secret: body.secret,
        algorithm: 'SHA1',
        digits: '6',
        period: '30',
      });
      const minutes = (Date.parse(body.expires_at) - Date.now()) / 60_000;
      expect(minutes).toBeGreaterThan(9.9);
      expect(minutes).toBeLessThanOrEqual(10);
      const png = Buffer.from(body.qr_code_image.split(',')[1]!, 'base64');
      expect(png.subarray(1, 4).toString()).toBe('PNG');
    });

    it('stores the secret sealed, never in plain text', async () => {
      const user = await createUser(t.app);
      const { secret } = (await setUp(user.token).expect(200)).body;
      const pending = await twoFactorRow(user.id);
      expect(pending?.pending_secret_sealed).toMatch(/^v1\./);
      expect(pending?.pending_secret_sealed).not.toContain(secret);
      expect(t.app.services.secretBox.open(pending!.pending_secret_sealed!)).toBe(secret);
      await confirm(user.token, await codeAt(secret));
      const enabled = await twoFactorRow(user.id);
      expect(enabled).toMatchObject({ pending_secret_sealed: null, pending_expires_at: null });
      expect(enabled?.secret_sealed).not.toContain(secret);
      expect(t.app.services.secretBox.open(enabled!.secret_sealed!)).toBe(secret);
      const dump = JSON.stringify(await t.database.db.selectFrom('user_two_factor').selectAll().execute());
      expect(dump).not.toContain(secret);
    });

    it('accepts a platform by slug or id and refuses an unknown one with 400', async () => {
      const user = await createUser(t.app);
      const email = await t.database.db
        .selectFrom('platforms')
        .select('id')
        .where('slug', '=', 'email')
        .executeTakeFirstOrThrow();
      const byId = await setUp(user.token, { platform_id: email.id }).expect(200);
      expect(byId.body.platform_slug).toBe('email');
      expect((await setUp(user.token, { platform_id: 'email' })).status).toBe(200);
      const unknown = await setUp(user.token, { platform_id: 'nowhere' }).expect(400);
      expect(unknown.body).toEqual({
        error: 'BadRequest',
        message: 'platform_id does not name an existing platform',
        code: 'two_factor.unknown_platform',
      });
    });

    it('enables with a correct code: 8 single-use backup codes shown once, stored hashed, 2fa_enabled recorded', async () => {
      const user = await createUser(t.app);
      const { secret } = (await setUp(user.token).expect(200)).body;
      const wrong = await confirm(user.token, await codeAt(secret, 10)).expect(400);
      expect(wrong.body).toEqual({
        error: 'BadRequest',
        message: 'Invalid two-factor code',
        code: 'two_factor.invalid_code',
      });

      const { body } = await confirm(user.token, await codeAt(secret)).expect(200);
      expect(body).toEqual({
        success: true,
        backup_codes: expect.any(Array),
        message: expect.stringContaining('enabled'),
      });
      expect(body.backup_codes).toHaveLength(8);
      expect(new Set(body.backup_codes).size).toBe(8);
      for (const code of body.backup_codes) expect(code).toMatch(/^[0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{4}$/);

      const stored = await t.database.db
        .selectFrom('two_factor_backup_codes')
        .select('code_hash')
        .where('user_id', '=', user.id)
        .execute();
      expect(stored).toHaveLength(8);
      for (const row of stored) expect(row.code_hash).toMatch(/^[0-9a-f]{64}$/);
      const storedText = JSON.stringify(stored);
      for (const code of body.backup_codes) expect(storedText).not.toContain(code.replaceAll('-', ''));

      expect((await status(user.token)).body).toEqual({
        enabled: true,
        enabled_at: expect.any(String),
        backup_codes_remaining: 8,
        platform_slug: 'email',
      });
      expect(await auditEvents('2fa_enabled', user.id)).toHaveLength(1);
    });

    it('refuses a TOTP code with 400 when it is not 6 digits', async () => {
      const user = await createUser(t.app);
      await setUp(user.token);
      const response = await confirm(user.token, '12345').expect(400);
      expect(response.body.message).toMatch(/^Body field 'code' must match pattern/);
    });

    it('answers 409 to a setup when 2FA is already on', async () => {
      const user = await userWith2fa();
      const response = await setUp(user.token).expect(409);
      expect(response.body).toEqual({
        error: 'Conflict',
        message: 'Two-factor authentication is already enabled',
        code: 'two_factor.already_enabled',
      });
    });

    it('answers 400 to verify without a pending setup, and once the setup expired', async () => {
      const user = await createUser(t.app);
      const none = await confirm(user.token, '123456').expect(400);
      expect(none.body).toEqual({
        error: 'BadRequest',
        message: 'No two-factor setup is pending; start one first',
        code: 'two_factor.no_setup_pending',
      });

      const { secret } = (await setUp(user.token).expect(200)).body;
      // Ten minutes later (the app's clock moves; the test does not wait), for this request only.
      const tenMinutes = 10 * 60_000 + 1000;
      t.clock.advance(tenMinutes);
      const expired = await confirm(user.token, await codeAt(secret)).finally(() => t.clock.advance(-tenMinutes));
      expect(expired.status).toBe(400);
      expect(expired.body).toEqual({
        error: 'BadRequest',
        message: 'The two-factor setup has expired; start it again',
        code: 'two_factor.setup_expired',
      });
      expect((await status(user.token).expect(200)).body.enabled).toBe(false);
    });
  });

  describe('replay protection', () => {
    it('refuses a code of the step already used or an earlier one, accepts the next step', async () => {
      const user = await createUser(t.app);
      const { secret } = (await setUp(user.token).expect(200)).body;
      const code = await codeAt(secret);
      expect((await confirm(user.token, code)).status).toBe(200);
      const replay = await regenerate(user.token, code).expect(400);
      expect(replay.body).toEqual({
        error: 'BadRequest',
        message: 'Invalid two-factor code',
        code: 'two_factor.invalid_code',
      });
      expect((await regenerate(user.token, await codeAt(secret, -1))).status).toBe(400);
      expect((await regenerate(user.token, await codeAt(secret, 1))).status).toBe(200);
      expect((await regenerate(user.token, await codeAt(secret, 1))).status).toBe(400);
    });
  });

  describe('backup codes and disabling', () => {
    it('regenerates: all previous codes stop working, the new ones work, the event is recorded', async () => {
      const user = await userWith2fa();
      await forgetUsedStep(user.id);
      const { body } = await regenerate(user.token, await codeAt(user.secret)).expect(200);
      expect(body).toEqual({
        success: true,
        backup_codes: expect.any(Array),
        message: 'New backup codes generated; the previous ones no longer work',
      });
      expect(body.backup_codes).toHaveLength(8);
      expect(body.backup_codes.some((c) => user.backupCodes.includes(c))).toBe(false);
      expect(await auditEvents('2fa_backup_codes_regenerated', user.id)).toHaveLength(1);

      const old = await disable(user.token, { code: user.backupCodes[0]! }).expect(400);
      expect(old.body).toEqual({
        error: 'BadRequest',
        message: 'Invalid two-factor code',
        code: 'two_factor.invalid_code',
      });
      expect((await disable(user.token, { code: body.backup_codes[0]!.toUpperCase() })).status).toBe(200);
    });

    it('regenerate takes a TOTP code, not a backup code', async () => {
      const user = await userWith2fa();
      const response = await regenerate(user.token, user.backupCodes[0]!);
      expect(response.status).toBe(400);
    });

    it('disables with a TOTP code: state and backup codes deleted, 2fa_disabled recorded, sign-in without a code again', async () => {
      const user = await userWith2fa();
      await forgetUsedStep(user.id);
      const response = await disable(user.token, { code: await codeAt(user.secret) }).expect(200);
      expect(response.body).toEqual({ success: true, message: 'Two-factor authentication disabled' });
      expect(await twoFactorRow(user.id)).toBeUndefined();
      expect(
        await t.database.db.selectFrom('two_factor_backup_codes').select('id').where('user_id', '=', user.id).execute(),
      ).toEqual([]);
      expect(await auditEvents('2fa_disabled', user.id)).toHaveLength(1);
      expect((await status(user.token)).body).toEqual({
        enabled: false,
        enabled_at: null,
        backup_codes_remaining: 0,
        platform_slug: null,
      });
      expect(await login(t.app, user.username, user.password)).toMatch(/^ses_/);
    });

    it('disables with a backup code; refuses a wrong code and a disabled 2FA with 400', async () => {
      const user = await userWith2fa();
      expect((await disable(user.token, { code: 'not-a-code' })).status).toBe(400);
      expect((await disable(user.token, { code: user.backupCodes[3]! })).status).toBe(200);
      const again = await disable(user.token, { code: user.backupCodes[4]! }).expect(400);
      expect(again.body).toEqual({
        error: 'BadRequest',
        message: 'Two-factor authentication is not enabled',
        code: 'two_factor.not_enabled',
      });
    });
  });

  describe('who may act on whose 2FA', () => {
    it('needs a credential', async () => {
      const response = await t.as(null).get('/v1/users/me/2fa/status').expect(401);
      expect(response.body).toEqual({
        error: 'Unauthorized',
        message: 'Invalid or missing authentication token',
        code: 'auth.unauthorized',
      });
    });

    it('refuses another user without two_factor:manage with 403', async () => {
      const [me, other] = [await createUser(t.app), await createUser(t.app)];
      const api = t.as(me.token);
      const requests: [string, () => Promise<{ status: number; body: unknown }>][] = [
        ['GET status', () => api.get('/v1/users/me/2fa/status', { query: { user_id: other.id } })],
        ['GET requirement', () => api.get('/v1/users/me/2fa/requirement', { query: { user_id: other.id } })],
        ['POST setup', () => api.post('/v1/users/me/2fa/setup', { user_id: other.id })],
        ['POST verify', () => api.post('/v1/users/me/2fa/verify', { user_id: other.id, code: '123456' })],
        ['DELETE', () => api.delete('/v1/users/me/2fa', { body: { user_id: other.id, code: '123456' } })],
        [
          'POST regenerate',
          () => api.post('/v1/users/me/2fa/backup-codes/regenerate', { user_id: other.id, code: '123456' }),
        ],
      ];
      for (const [name, send] of requests) {
        const response = await send();
        expect(response.status, name).toBe(403);
        expect(response.body).toEqual({
          error: 'Forbidden',
          message: 'Insufficient permissions for this operation',
          code: 'auth.forbidden',
        });
      }
      expect((await api.get('/v1/users/me/2fa/status', { query: { user_id: me.id } })).status).toBe(200);
    });

    it('lets a holder of two_factor:manage and a super admin act on another user', async () => {
      const role = await createRoleWith(t.app, 'Two Factor Managers', ['two_factor:manage']);
      const manager = await createUser(t.app, ['role_user', role]);
      const other = await userWith2fa();
      const read = await t
        .as(manager.token)
        .get('/v1/users/me/2fa/status', { query: { user_id: other.id } })
        .expect(200);
      expect(read.body.enabled).toBe(true);
      await disable(admin, { user_id: other.id, code: other.backupCodes[0]! }).expect(200);
      const [event] = await auditEvents('2fa_disabled', other.id);
      const adminId = (await t.app.services.users.findByUsername('admin'))!.id;
      expect(event).toMatchObject({ actor_id: adminId });
    });

    it('answers 404 for an unknown user and 400 for a malformed user_id', async () => {
      const missing = await t
        .as(admin)
        .get('/v1/users/me/2fa/status', { query: { user_id: '00000000-0000-4000-8000-000000000000' } })
        .expect(404);
      expect(missing.body).toEqual({ error: 'NotFound', message: 'User not found', code: 'user.not_found' });
      const malformed = await t.as(admin).get('/v1/users/me/2fa/status?user_id=nope').expect(400);
      expect(malformed.body.message).toMatch(/^Query parameter 'user_id' must match format "uuid"/);
    });

    it('refuses user_id that differs between query and body', async () => {
      const user = await createUser(t.app);
      const response = await t
        .as(admin)
        .post(
          '/v1/users/me/2fa/setup',
          { user_id: '00000000-0000-4000-8000-000000000000' },
          { query: { user_id: user.id } },
        )
        .expect(400);
      expect(response.body).toEqual({
        error: 'BadRequest',
        message: 'user_id in the query and in the body differ',
        code: 'two_factor.user_id_mismatch',
      });
    });

    it('refuses the system key on /v1/users/me/2fa (not on its allowlist)', async () => {
      const user = await createUser(t.app);
      const response = await t
        .as(TEST_SYSTEM_KEY)
        .get('/v1/users/me/2fa/status', { query: { user_id: user.id } })
        .expect(403);
      expect(response.body).toEqual({
        error: 'Forbidden',
        message: 'System key not permitted on this route',
        code: 'auth.system_key_not_permitted',
      });
    });

    it('an API key acts on its owner only with two_factor:manage (acting on oneself takes a session)', async () => {
      const { key } = await createApiKey(t.app, admin, { name: '2fa reader' });
      const response = await status(key);
      expect(response.status).toBe(403);
    });
  });

  describe('requirement', () => {
    it('is not required by default', async () => {
      const user = await createUser(t.app);
      const response = await requirement(user.token).expect(200);
      expect(response.body).toEqual({ required: false, enabled: false, reason: null, passkeys: 0, satisfied: false });
    });

    it('is required by a role with requires_two_factor and says which', async () => {
      const role = await t.app.services.access.createRole({ name: 'Treasurers', requires_two_factor: true });
      const user = await userWith2fa(['role_user', role.id]);
      const response = await requirement(user.token);
      expect(response.body).toEqual({
        required: true,
        enabled: true,
        reason: "Role 'Treasurers' requires two-factor authentication",
        passkeys: 0,
        satisfied: true,
      });
    });

    it('is required by a platform of the user with two_factor_required', async () => {
      const user = await createUser(t.app);
      await t.database.db
        .updateTable('platforms')
        .set({ two_factor_required: true })
        .where('slug', '=', 'email')
        .execute();
      try {
        const response = await requirement(user.token);
        expect(response.body).toEqual({
          required: true,
          enabled: false,
          reason: "Platform 'Email' requires two-factor authentication",
          passkeys: 0,
          satisfied: false,
        });
      } finally {
        await t.database.db
          .updateTable('platforms')
          .set({ two_factor_required: false })
          .where('slug', '=', 'email')
          .execute();
      }
    });
  });

  describe('sign-in with 2FA', () => {
    const loginRequest = (identifier: string, password: string) =>
      t.as(null).post('/v1/auth/login', { identifier, password });
    /** The temporary token of a password sign-in of a user with 2FA. */
    const tempTokenOf = async (user: { username: string; password: string }) =>
      (await loginRequest(user.username, user.password).expect(200)).body.temp_token!;
    const verify = (temp_token: string, code: string) => t.as(null).post('/v1/auth/2fa/verify', { temp_token, code });
    const sessionsOf = (userId: string) =>
      t.database.db.selectFrom('sessions').selectAll().where('user_id', '=', userId).execute();

    it('login answers a 2fa_ temporary token and no session; verify turns it into one', async () => {
      const user = await userWith2fa();
      const before = (await sessionsOf(user.id)).length;
      const { body } = await loginRequest(user.username, user.password).expect(200);
      expect(body).toEqual({
        user_id: user.id,
        email: `${user.username}@example.org`,
        username: user.username,
        provider: 'email',
        requires_2fa: true,
        temp_token: expect.stringMatching(/^2fa_[A-Za-z0-9_-]{43}$/),
        preferred_locale: null,
      });
      expect(await sessionsOf(user.id)).toHaveLength(before);
      const challenge = await t.database.db
        .selectFrom('two_factor_challenges')
        .selectAll()
        .where('user_id', '=', user.id)
        .executeTakeFirstOrThrow();
      expect(challenge.token_hash).toMatch(/^[0-9a-f]{64}$/);
      expect(challenge.token_hash).not.toBe(body.temp_token);
      const minutes = (challenge.expires_at.getTime() - Date.now()) / 60_000;
      expect(minutes).toBeGreaterThan(9.9);
      expect(minutes).toBeLessThanOrEqual(10);

      await forgetUsedStep(user.id);
      const verified = await verify(body.temp_token!, await codeAt(user.secret)).expect(200);
      const session = verified.body;
      expect(session).toEqual(
        signedInBody({ user_id: user.id, email: `${user.username}@example.org`, username: user.username }),
      );
      expect((await status(session.session_token!)).status).toBe(200);
      expect(await auditEvents('2fa_verified', user.id)).toEqual([
        expect.objectContaining({ status: 'success', resource_id: session.session_id }),
      ]);
      expect((await auditEvents('login', user.id)).some((e) => e.resource_id === session.session_id)).toBe(true);

      const reused = await verify(body.temp_token!, await codeAt(user.secret, 1)).expect(401);
      expect(reused.body).toEqual({
        error: 'Unauthorized',
        message: 'Invalid or expired two-factor token',
        code: 'two_factor.invalid_challenge',
      });
    });

    it('refuses a wrong code with 401 and a failure event, keeping the token for another try', async () => {
      const user = await userWith2fa();
      const temp_token = await tempTokenOf(user);
      const wrong = await verify(temp_token, await codeAt(user.secret, 10)).expect(401);
      expect(wrong.body).toEqual({
        error: 'Unauthorized',
        message: 'Invalid two-factor code',
        code: 'two_factor.wrong_sign_in_code',
      });
      expect(await auditEvents('2fa_verified', user.id)).toEqual([
        expect.objectContaining({ status: 'failure', error_message: 'invalid two-factor code' }),
      ]);
      expect((await verify(temp_token, user.backupCodes[0]!)).status).toBe(200);
    });

    it('closes the token after 5 wrong codes', async () => {
      const user = await userWith2fa();
      const temp_token = await tempTokenOf(user);
      for (let i = 0; i < 5; i++) expect((await verify(temp_token, 'wrong-code')).status).toBe(401);
      const after = await verify(temp_token, user.backupCodes[0]!).expect(401);
      expect(after.body.message).toBe('Invalid or expired two-factor token');
    });

    it('refuses a token without the 2fa_ prefix, an unknown one and an expired one with 401', async () => {
      const user = await userWith2fa();
      const temp_token = await tempTokenOf(user);
      for (const token of [temp_token.replace(/^2fa_/, 'ses_'), temp_token.slice(4), `2fa_${'x'.repeat(43)}`]) {
        const response = await verify(token, user.backupCodes[0]!).expect(401);
        expect(response.body).toEqual({
          error: 'Unauthorized',
          message: 'Invalid or expired two-factor token',
          code: 'two_factor.invalid_challenge',
        });
      }
      await t.database.db
        .updateTable('two_factor_challenges')
        .set({ expires_at: new Date(Date.now() - 1000) })
        .where('user_id', '=', user.id)
        .execute();
      expect((await verify(temp_token, user.backupCodes[0]!)).status).toBe(401);
    });

    it('a backup code signs in once; when 3 or fewer remain a reminder mail goes to the email account', async () => {
      const user = await userWith2fa();
      const address = `${user.username}@example.org`;
      const signInWith = async (code: string) => verify(await tempTokenOf(user), code);
      for (const code of user.backupCodes.slice(0, 4)) expect((await signInWith(code)).status).toBe(200);
      const reused = await signInWith(user.backupCodes[0]!);
      expect(reused.status).toBe(401);
      // Only the security notice of turning 2FA on has come so far.
      const reminders = () => smtp.received.filter((m) => m.to === address && /backup codes? left/.test(m.subject));
      expect(reminders()).toEqual([]);

      expect((await signInWith(user.backupCodes[4]!)).status).toBe(200);
      const mail = await smtp.waitFor(address, (m) => /backup codes? left/.test(m.subject));
      expect(mail.subject).toBe('Only 3 Waygate backup codes left');
      expect(mail.text).toContain(user.username);
      expect((await status(user.token).expect(200)).body.backup_codes_remaining).toBe(3);
    });
  });

  describe('POST /v1/auth/2fa/check', () => {
    const check = (token: string | null, body: RequestBody<'post', '/v1/auth/2fa/check'>) =>
      t.as(token).post('/v1/auth/2fa/check', body);

    it('answers 401 without a credential and 403 to anything but the system key', async () => {
      const user = await createUser(t.app);
      await check(null, { user_id: user.id }).expect(401);
      const session = await check(user.token, { user_id: user.id }).expect(403);
      expect(session.body).toEqual({
        error: 'Forbidden',
        message: 'Only the system API key may call this endpoint',
        code: 'auth.system_key_required',
      });
      const { key } = await createApiKey(t.app, admin, { name: 'not the system key' });
      expect((await check(key, { user_id: 'not-even-a-uuid' })).status).toBe(403);
    });

    it('answers 400 for a malformed or unknown user id', async () => {
      const malformed = await check(TEST_SYSTEM_KEY, { user_id: 'nope' }).expect(400);
      expect(malformed.body.message).toMatch(/^Body field 'user_id' must match format "uuid"/);
      const unknown = await check(TEST_SYSTEM_KEY, { user_id: '00000000-0000-4000-8000-000000000000' }).expect(400);
      expect(unknown.body).toEqual({
        error: 'BadRequest',
        message: 'user_id does not name an existing user',
        code: 'two_factor.unknown_user',
      });
    });

    it('says no 2FA is needed for a user without it', async () => {
      const user = await createUser(t.app);
      const response = await check(TEST_SYSTEM_KEY, { user_id: user.id }).expect(200);
      expect(response.body).toEqual({ requires_2fa: false });
    });

    it('issues a temporary token that keeps the OAuth provider through verify', async () => {
      await t.database.db
        .insertInto('platforms')
        .values({ name: 'Codeforge', slug: 'codeforge', is_oauth: true })
        .execute();
      const user = await userWith2fa();
      const response = await check(TEST_SYSTEM_KEY, { user_id: user.id, oauth_provider: 'codeforge' }).expect(200);
      expect(response.body).toEqual({ requires_2fa: true, temp_token: expect.stringMatching(/^2fa_/) });
      const verified = await t
        .as(null)
        .post('/v1/auth/2fa/verify', { temp_token: response.body.temp_token!, code: user.backupCodes[0]! })
        .expect(200);
      expect(verified.body.provider).toBe('codeforge');
      const session = await t.database.db
        .selectFrom('sessions')
        .select('provider')
        .where('id', '=', verified.body.session_id!)
        .executeTakeFirstOrThrow();
      expect(session.provider).toBe('codeforge');

      const unknown = await check(TEST_SYSTEM_KEY, { user_id: user.id, oauth_provider: 'nowhere' });
      expect(unknown.status).toBe(400);
    });
  });

  describe('defects found in review', () => {
    it('a setup started while 2FA is on never moves the enabled 2FA to another platform', async () => {
      const user = await userWith2fa();
      const before = await twoFactorRow(user.id);
      const other = await t.database.db
        .insertInto('platforms')
        .values({ name: 'Other', slug: `other_${user.id.slice(0, 8)}`, is_oauth: true, two_factor_supported: true })
        .returning('id')
        .executeTakeFirstOrThrow();
      // The race: a setup whose "not enabled yet" check passed just before the verify committed.
      await createTwoFactorRepo(t.database.db, t.clock).savePending(
        user.id,
        other.id,
        'sealed-pending',
        new Date(Date.now() + 60_000),
      );
      const after = await twoFactorRow(user.id);
      expect(after).toMatchObject({
        platform_id: before!.platform_id,
        secret_sealed: before!.secret_sealed,
        enabled_at: before!.enabled_at,
      });
    });

    // Spies on one node's platforms service: on two nodes the request may reach the other.
    it.skipIf(twoNodes)(
      'checks the requirement with one read of the platforms, whatever the number of accounts',
      async () => {
        const user = await createUser(t.app);
        const find = vi.spyOn(t.app.services.loginProviders, 'find');
        const list = vi.spyOn(t.app.services.loginProviders, 'list');
        try {
          expect((await requirement(user.token)).body).toEqual({
            required: false,
            enabled: false,
            reason: null,
            passkeys: 0,
            satisfied: false,
          });
          expect(find).not.toHaveBeenCalled();
          expect(list).toHaveBeenCalledTimes(1);
        } finally {
          find.mockRestore();
          list.mockRestore();
        }
      },
    );

    it('a locked-out user does not use up the attempts of their temporary token', async () => {
      const user = await userWith2fa();
      const tempToken = (
        await t.as(null).post('/v1/auth/login', { identifier: user.username, password: user.password }).expect(200)
      ).body.temp_token!;
      for (let i = 0; i < 10; i++)
        await t.app.services.signInThrottle.recordFailure(
          { identifier: `2fa:${user.id}`, userId: user.id },
          '198.51.100.7',
        );
      const refused = await t.as(null).post('/v1/auth/2fa/verify', { temp_token: tempToken, code: '000000' });
      expect(refused.status).toBe(429);
      const challenge = await t.database.db
        .selectFrom('two_factor_challenges')
        .select('attempts')
        .where('user_id', '=', user.id)
        .executeTakeFirstOrThrow();
      expect(challenge.attempts).toBe(0);
    });
  });
});

describe('low backup codes reminder when mail fails', () => {
  it('still signs in and logs the failure', async () => {
    // Nothing listens on port 1: every mail fails.
    const t = await buildTestApp({ config: { smtpUrl: 'smtp://127.0.0.1:1' }, captureLogs: true });
    try {
      const user = await createUser(t.app);
      const api = t.as(user.token);
      const { secret } = (await api.post('/v1/users/me/2fa/setup', {}).expect(200)).body;
      const enabled = await api.post('/v1/users/me/2fa/verify', { code: await codeAt(secret) }).expect(200);
      const codes = enabled.body.backup_codes;
      // Five codes used already: signing in with the sixth leaves 2.
      await t.database.db
        .updateTable('two_factor_backup_codes')
        .set({ used_at: new Date() })
        .where('code_hash', 'in', codes.slice(0, 5).map(hashBackupCode))
        .execute();
      const anonymous = t.as(null);
      const { temp_token } = (
        await anonymous.post('/v1/auth/login', { identifier: user.username, password: user.password }).expect(200)
      ).body;
      const verified = await anonymous
        .post('/v1/auth/2fa/verify', { temp_token: temp_token!, code: codes[5]! })
        .expect(200);
      expect(verified.body.session_token).toMatch(/^ses_/);
      await expect
        .poll(() => t.logs().some((line) => line.msg === 'could not send the low backup codes reminder'), {
          timeout: 10_000,
        })
        .toBe(true);
    } finally {
      await t.close();
    }
  });
});
