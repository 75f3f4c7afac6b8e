import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenFromMail, type FakeSmtp } from '../../../test/fakes/smtp.js';
import {
  buildMailingTestApp,
  createApiKey,
  createUser,
  login,
  onEveryNode,
  type TestApp,
} from '../../../test/helpers.js';
import { softwareAuthenticator } from '../../../test/webauthn-authenticator.js';
import { RECENT_SIGN_IN_MS } from './reauthentication.js';

const ORIGIN = 'https://waygate.example';
const REAUTHENTICATE = {
  error: 'Forbidden',
  message:
    'Confirm it is you: give current_password, or sign in again (password, passkey or two-factor code) and retry within 15 minutes',
  code: 'auth.reauthentication_required',
};

/** Issue 41, finding 5: a stolen session alone leaves no passkey or API key behind, and a new password can take them all away. */
describe('re-authentication before a new passkey or API key', () => {
  let t: TestApp;
  let smtp: FakeSmtp;
  beforeAll(async () => {
    ({ t, smtp } = await buildMailingTestApp({ config: { publicUrl: ORIGIN } }));
  });
  afterAll(() => t.close());

  const developer = () => createUser(t.app, ['role_user', 'role_developer']);
  /** Moves past the window in which a sign-in counts as recent (the test clock only: nothing else in this file relies on it). */
  const later = () => t.clock.advance(RECENT_SIGN_IN_MS + 1000);
  const expectRefused = (response: { status: number; body: unknown }) =>
    expect({ status: response.status, body: response.body }).toEqual({ status: 403, body: REAUTHENTICATE });
  const authenticator = softwareAuthenticator(ORIGIN);

  async function addPasskey(token: string, name: string, body?: { current_password: string }) {
    const options = await t.as(token).post('/v1/users/me/passkeys/options', body).expect(200);
    const created = await t
      .as(token)
      .post('/v1/users/me/passkeys', { name, response: authenticator.create(options.body) })
      .expect(201);
    return created.body;
  }

  it('lets a session signed in more than 15 minutes ago create a key only with its current password or after a new sign-in', async () => {
    const user = await developer();
    const api = t.as(user.token);
    expect((await api.post('/v1/api-keys', { name: 'fresh', scopes: [] })).status).toBe(201);
    later();
    expectRefused(await api.post('/v1/api-keys', { name: 'stale', scopes: [] }));
    const wrong = await api
      .post('/v1/api-keys', { name: 'stale', scopes: [], current_password: 'not the password' })
      .expect(400);
    expect(wrong.body.code).toBe('password_change.wrong_current_password');
    const confirmed = await api
      .post('/v1/api-keys', { name: 'confirmed', scopes: [], current_password: user.password })
      .expect(201);
    expect(confirmed.body.name).toBe('confirmed');

    const again = await login(t.app, user.username, user.password);
    expect((await t.as(again).post('/v1/api-keys', { name: 'signed in again', scopes: [] })).status).toBe(201);
    const keys = (await t.as(again).get('/v1/api-keys').expect(200)).body.data.map((key) => key.name);
    expect(keys.sort()).toEqual(['confirmed', 'fresh', 'signed in again']);
  });

  it("asks the same before a key's value is regenerated, and never of an API key (the spec's callers)", async () => {
    const user = await developer();
    const manager = await createApiKey(t.app, user.token, {
      name: 'key manager',
      scopes: ['api_keys:read', 'api_keys:write'],
    });
    const { id } = await createApiKey(t.app, user.token, { name: 'tracker', scopes: [] });
    later();
    expectRefused(await t.as(user.token).post(`/v1/api-keys/${id}/regenerate`));
    expect(
      (await t.as(user.token).post(`/v1/api-keys/${id}/regenerate`, { current_password: user.password })).status,
    ).toBe(200);
    expect((await t.as(manager.key).post(`/v1/api-keys/${id}/regenerate`)).status).toBe(200);
    expect((await t.as(manager.key).post('/v1/api-keys', { name: 'made by a key', scopes: [] })).status).toBe(201);
  });

  it('lets a session signed in more than 15 minutes ago add a passkey only with its current password or after a new sign-in', async () => {
    const user = await createUser(t.app);
    await addPasskey(user.token, 'fresh');
    later();
    expectRefused(await t.as(user.token).post('/v1/users/me/passkeys/options'));
    expectRefused(await t.as(user.token).post('/v1/users/me/passkeys/options', {}));
    await addPasskey(user.token, 'confirmed', { current_password: user.password });
    await addPasskey(await login(t.app, user.username, user.password), 'signed in again');

    const gql = (query: string) => t.as(user.token).post('/v1/gql', { query }).expect(200);
    const refused = (await gql('mutation { passkeyCreationOptions }')).body;
    expect(refused.errors?.[0]?.extensions?.code).toBe('auth.reauthentication_required');
    const options = (
      await gql(`mutation { passkeyCreationOptions(currentPassword: ${JSON.stringify(user.password)}) }`)
    ).body;
    expect(options.data?.passkeyCreationOptions).toMatchObject({ challenge: expect.any(String) });
  });

  describe('a new password that asks for it removes every passkey and API key', () => {
    const emailOf = (user: { username: string }) => `${user.username}@example.org`;
    async function userWithPasskeyAndKeys() {
      const user = await developer();
      await addPasskey(user.token, 'phone');
      const key = await createApiKey(t.app, user.token, { name: 'script', scopes: [] });
      return { ...user, key: key.key };
    }
    /** [passkeys, keys] the user has; whether the key still works. */
    async function left(user: { id: string; key: string }) {
      const count = async (table: 'passkeys' | 'api_keys') =>
        Number(
          (
            await t.database.db
              .selectFrom(table)
              .select((eb) => eb.fn.countAll<string>().as('n'))
              .where('user_id', '=', user.id)
              .executeTakeFirstOrThrow()
          ).n,
        );
      const works = (await t.as(user.key).get('/v1/users/me')).status === 200;
      return { passkeys: await count('passkeys'), api_keys: await count('api_keys'), key_works: works };
    }
    const changedMail = async (user: { username: string }) => {
      await onEveryNode(t, (services) => services.securityNotices.settled());
      return smtp.waitFor(emailOf(user), (mail) => mail.subject === 'Your Waygate password was changed');
    };

    it('by change: kept without the option, removed with it, and the mail says so', async () => {
      const keeping = await userWithPasskeyAndKeys();
      const kept = await t.as(keeping.token).post('/v1/users/me/password', {
        current_password: keeping.password,
        new_password: 'a brand new password',
      });
      expect(kept.status).toBe(200);
      expect(await left(keeping)).toEqual({ passkeys: 1, api_keys: 1, key_works: true });
      expect((await changedMail(keeping)).text).not.toContain('passkey');

      const removing = await userWithPasskeyAndKeys();
      const removed = await t.as(removing.token).post('/v1/users/me/password', {
        current_password: removing.password,
        new_password: 'a brand new password',
        revoke_passkeys_and_keys: true,
      });
      expect(removed.body).toEqual({
        message: 'Password changed; your other sessions have ended',
        other_sessions_ended: 0,
      });
      expect(await left(removing)).toEqual({ passkeys: 0, api_keys: 0, key_works: false });
      expect((await changedMail(removing)).text).toContain(
        'As asked, every passkey (1) and API key (1) of your account was removed too; system keys stay.',
      );
      const audit = await t.database.db
        .selectFrom('audit_events')
        .select('metadata')
        .where('user_id', '=', removing.id)
        .where('event_type', '=', 'password_changed')
        .executeTakeFirstOrThrow();
      expect(audit.metadata).toMatchObject({ via: 'change', passkeys_removed: 1, api_keys_removed: 1 });
    });

    async function resetToken(user: { username: string }) {
      expect((await t.as(null).post('/v1/auth/reset-password', { email: emailOf(user) })).status).toBe(200);
      return tokenFromMail(await smtp.waitFor(emailOf(user), (mail) => mail.subject === 'Reset your Waygate password'));
    }

    it('by reset: kept without the option, removed with it, and the mail says so', async () => {
      const keeping = await userWithPasskeyAndKeys();
      const kept = await t.as(null).post('/v1/auth/reset-password/complete', {
        token: await resetToken(keeping),
        new_password: 'a brand new password',
        revoke_passkeys_and_keys: false,
      });
      expect(kept.status).toBe(200);
      expect(await left(keeping)).toEqual({ passkeys: 1, api_keys: 1, key_works: true });
      expect((await changedMail(keeping)).text).not.toContain('passkey');

      const removing = await userWithPasskeyAndKeys();
      const removed = await t.as(null).post('/v1/auth/reset-password/complete', {
        token: await resetToken(removing),
        new_password: 'a brand new password',
        revoke_passkeys_and_keys: true,
      });
      expect(removed.body).toEqual({ message: 'Password updated; please sign in with the new password' });
      expect(await left(removing)).toEqual({ passkeys: 0, api_keys: 0, key_works: false });
      expect((await changedMail(removing)).text).toContain(
        'As asked, every passkey (1) and API key (1) of your account was removed too; system keys stay.',
      );
    });

    it('by the reset page: its box removes them too, and the page says so', async () => {
      const user = await userWithPasskeyAndKeys();
      const token = await resetToken(user);
      // The reset page is HTML outside the OpenAPI document, and its form posts are form-encoded.
      const form = await t.as(null).raw({ url: `/reset-password?token=${token}` });
      expect(form.text).toContain(
        '<input type="checkbox" name="revoke_passkeys_and_keys" value="true"> Also remove all passkeys and API keys</label>',
      );
      const done = await t.as(null).raw({
        method: 'POST',
        url: '/reset-password',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({
          token,
          new_password: 'a brand new password',
          password_again: 'a brand new password',
          revoke_passkeys_and_keys: 'true',
        }).toString(),
      });
      expect(done.status).toBe(200);
      expect(done.text).toContain('Every passkey and API key of the account was removed too');
      expect(await left(user)).toEqual({ passkeys: 0, api_keys: 0, key_works: false });
    });
  });
});
