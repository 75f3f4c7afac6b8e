import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bearer,
  buildMailingTestApp,
  createApiKey,
  createUser,
  login,
  onEveryNode,
  TEST_ADMIN,
  type TestApp,
} from '../../../test/helpers.js';
import type { FakeSmtp } from '../../../test/fakes/smtp.js';
import { softwareAuthenticator } from '../../../test/webauthn-authenticator.js';
import { generate } from 'otplib';
import { networkOf, NOTICE_INTERVAL_SECS } from './service.js';

const FIREFOX = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0';
const FIREFOX_UPDATED = FIREFOX.replaceAll('128.0', '129.0');
const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';

describe('security notices', () => {
  let t: TestApp;
  let smtp: FakeSmtp;
  let admin: string;
  beforeAll(async () => {
    ({ t, smtp } = await buildMailingTestApp({ config: { publicUrl: 'https://waygate.example' } }));
    admin = await login(t.app, TEST_ADMIN.username, TEST_ADMIN.password);
  });
  afterAll(() => t.close());

  const emailOf = (user: { username: string }) => `${user.username}@example.org`;
  /** The mails to this address so far, once every notice under way has gone out. */
  const mailsTo = async (address: string) => {
    await onEveryNode(t, (services) => services.securityNotices.settled());
    return smtp.received.filter((mail) => mail.to === address).map((mail) => mail.subject);
  };
  const signIn = (user: { username: string; password: string }, agent: string, ip: string) =>
    t.app.inject({
      method: 'POST',
      url: '/v1/auth/login',
      headers: { 'user-agent': agent },
      remoteAddress: ip,
      payload: { identifier: user.username, password: user.password },
    });
  const settings = (token: string, payload?: object) =>
    t.app.inject({
      method: payload ? 'PATCH' : 'GET',
      url: '/v1/users/me/security-notifications',
      headers: bearer(token),
      ...(payload ? { payload } : {}),
    });

  it('tells of a sign-in from a new browser and network, not of a known one (an update or a neighbouring address), and not when turned off', async () => {
    const user = await createUser(t.app); // the first sign-in ever is recorded silently
    expect((await signIn(user, FIREFOX, '203.0.113.7')).statusCode).toBe(200);
    const mail = await smtp.waitFor(emailOf(user));
    expect(mail.subject).toBe('New sign-in to your Waygate account');
    expect(mail.text).toContain('Firefox 128.0 on Windows 10');
    expect(mail.text).toContain('(203.0.113.7)');
    expect(mail.text).toContain('https://waygate.example/console/#/account');

    expect((await signIn(user, FIREFOX_UPDATED, '203.0.113.99')).statusCode).toBe(200);
    expect(await settings(user.token)).toMatchObject({
      statusCode: 200,
      body: JSON.stringify({ new_sign_in: true, new_api_key: true }),
    });
    const off = await settings(user.token, { new_sign_in: false });
    expect(off.statusCode).toBe(200);
    expect(off.json()).toEqual({ new_sign_in: false, new_api_key: true });
    expect((await signIn(user, CHROME, '198.51.100.1')).statusCode).toBe(200);
    expect(await mailsTo(emailOf(user))).toEqual(['New sign-in to your Waygate account']);
  });

  it("tells of a changed password in the user's locale, at most once in 10 minutes", async () => {
    const user = await createUser(t.app);
    expect(
      (
        await t.app.inject({
          method: 'PATCH',
          url: `/v1/users/${user.id}/locale`,
          headers: bearer(user.token),
          payload: { locale: 'de' },
        })
      ).statusCode,
    ).toBe(200);
    const change = (from: string, to: string) =>
      t.app.inject({
        method: 'POST',
        url: '/v1/users/me/password',
        headers: bearer(user.token),
        payload: { current_password: from, new_password: to },
      });
    expect((await change(user.password, 'second password 2')).statusCode).toBe(200);
    const mail = await smtp.waitFor(emailOf(user));
    expect(mail.subject).toBe('Dein Waygate-Passwort wurde geändert');
    expect(mail.text).toBe(
      `Hallo ${user.username},\n\ndas Passwort deines Kontos wurde geändert; deine anderen Sitzungen wurden beendet.\n\n` +
        'Wenn du das nicht warst, setze sofort dein Passwort zurück und wende dich an deinen Administrator.\n',
    );
    expect((await change('second password 2', 'third password 3')).statusCode).toBe(200);
    expect(await mailsTo(emailOf(user))).toHaveLength(1);
    t.clock.advance(NOTICE_INTERVAL_SECS * 1000);
    expect((await change('third password 3', 'fourth password 4')).statusCode).toBe(200);
    expect(await mailsTo(emailOf(user))).toHaveLength(2);
  });

  it('tells of a new API key unless turned off, of a ban with its reason, and of a scheduled deletion', async () => {
    const user = await createUser(t.app, ['role_user', 'role_developer']);
    await createApiKey(t.app, user.token, { name: 'laptop sync' });
    expect((await smtp.waitFor(emailOf(user))).text).toContain('the API key "laptop sync" was created');
    const other = await createUser(t.app, ['role_user', 'role_developer']);
    expect((await settings(other.token, { new_api_key: false })).statusCode).toBe(200);
    await createApiKey(t.app, other.token, { name: 'quiet' });

    const ban = await t.app.inject({
      method: 'POST',
      url: `/v1/users/${user.id}/ban`,
      headers: bearer(admin),
      payload: { reason: 'spam' },
    });
    expect(ban.statusCode).toBe(200);
    const banned = await smtp.waitFor(emailOf(user), (m) => m.subject === 'Your Waygate account was suspended');
    expect(banned.text).toContain('Reason: spam');

    expect(
      (await t.app.inject({ method: 'DELETE', url: `/v1/users/${other.id}`, headers: bearer(admin) })).statusCode,
    ).toBe(204);
    expect(await mailsTo(emailOf(other))).toEqual(['Your Waygate account is scheduled for deletion']);
  });

  it('tells of a passkey added and removed, and of two-factor turned on and off', async () => {
    const user = await createUser(t.app);
    const call = (method: 'POST' | 'DELETE', url: string, payload?: object) =>
      t.app.inject({ method, url, headers: bearer(user.token), ...(payload ? { payload } : {}) });
    const options = (await call('POST', '/v1/users/me/passkeys/options', {})).json();
    const passkey = await call('POST', '/v1/users/me/passkeys', {
      name: 'Phone',
      response: softwareAuthenticator('https://waygate.example').create(options),
    });
    expect(passkey.statusCode).toBe(201);
    expect((await call('DELETE', `/v1/users/me/passkeys/${passkey.json().id}`)).statusCode).toBe(204);
    const { secret } = (await call('POST', '/v1/users/me/2fa/setup', {})).json();
    // Codes on the service's clock (other tests of the file move it); the next step's for turning off, as a code works once.
    const code = (steps = 0) => generate({ secret, epoch: Math.floor(t.clock.nowMs() / 1000) + steps * 30 });
    expect((await call('POST', '/v1/users/me/2fa/verify', { code: await code() })).statusCode).toBe(200);
    expect((await call('DELETE', '/v1/users/me/2fa', { code: await code(1) })).statusCode).toBe(200);
    expect((await mailsTo(emailOf(user))).sort()).toEqual([
      'A passkey was added to your Waygate account',
      'A passkey was removed from your Waygate account',
      'Two-factor authentication was turned off for your Waygate account',
      'Two-factor authentication was turned on for your Waygate account',
    ]);
    expect((await smtp.waitFor(emailOf(user), (m) => m.subject.startsWith('A passkey was added'))).text).toContain(
      'the passkey "Phone" was added',
    );
  });

  it("tells of every passkey added and every API key created, however close together (an intruder's second one too)", async () => {
    const user = await createUser(t.app, ['role_user', 'role_developer']);
    const authenticator = softwareAuthenticator('https://waygate.example');
    for (const name of ['Phone', 'Laptop']) {
      const options = (
        await t.app.inject({ method: 'POST', url: '/v1/users/me/passkeys/options', headers: bearer(user.token) })
      ).json();
      const added = await t.app.inject({
        method: 'POST',
        url: '/v1/users/me/passkeys',
        headers: bearer(user.token),
        payload: { name, response: authenticator.create(options) },
      });
      expect(added.statusCode).toBe(201);
    }
    await createApiKey(t.app, user.token, { name: 'first key' });
    await createApiKey(t.app, user.token, { name: 'second key' });
    expect((await mailsTo(emailOf(user))).sort()).toEqual([
      'A new API key was created for your Waygate account',
      'A new API key was created for your Waygate account',
      'A passkey was added to your Waygate account',
      'A passkey was added to your Waygate account',
    ]);
    const texts = smtp.received
      .filter((mail) => mail.to === emailOf(user))
      .map((mail) => mail.text.split('\n')[2])
      .sort();
    expect(texts).toEqual([
      'the API key "first key" was created for your account.',
      'the API key "second key" was created for your account.',
      'the passkey "Laptop" was added: it can now sign in to your account.',
      'the passkey "Phone" was added: it can now sign in to your account.',
    ]);
  });

  it('refuses an API key on the settings (a session only)', async () => {
    const user = await createUser(t.app, ['role_user', 'role_developer']);
    const key = await createApiKey(t.app, user.token, { name: 'k' });
    const refused = await settings(key.key);
    expect(refused.statusCode).toBe(403);
    expect(refused.json().code).toBe('session.session_required');
  });

  it('counts addresses of one network as one: IPv4 /24, IPv6 /48', () => {
    expect(networkOf('203.0.113.7')).toBe('203.0.113.0/24');
    expect(networkOf('::ffff:203.0.113.7')).toBe('203.0.113.0/24');
    expect(networkOf('2001:db8:12:3::1')).toBe('2001:db8:12::/48');
    expect(networkOf('2001:db8::1')).toBe('2001:db8:0::/48');
  });
});
