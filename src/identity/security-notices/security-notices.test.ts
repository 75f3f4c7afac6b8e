import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unchecked, type RequestBody } from '../../../test/client.js';
import {
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
    t
      .as(null)
      .post(
        '/v1/auth/login',
        { identifier: user.username, password: user.password },
        { headers: { 'user-agent': agent }, remoteAddress: ip },
      );
  const settings = (token: string) => t.as(token).get('/v1/users/me/security-notifications');
  const changeSettings = (token: string, body: RequestBody<'patch', '/v1/users/me/security-notifications'>) =>
    t.as(token).patch('/v1/users/me/security-notifications', body);
  /** The authenticator's answer to the server's creation options (the document types their `user` loosely). */
  const newPasskey = (authenticator: ReturnType<typeof softwareAuthenticator>, options: object) =>
    unchecked(authenticator.create(options as { challenge: string; user: { id: string } }));

  it('tells of a sign-in from a new browser and network, not of a known one (an update or a neighbouring address), and not when turned off', async () => {
    const user = await createUser(t.app); // the first sign-in ever is recorded silently
    await signIn(user, FIREFOX, '203.0.113.7').expect(200);
    const mail = await smtp.waitFor(emailOf(user));
    expect(mail.subject).toBe('New sign-in to your Waygate account');
    expect(mail.text).toContain('Firefox 128.0 on Windows 10');
    expect(mail.text).toContain('(203.0.113.7)');
    expect(mail.text).toContain('https://waygate.example/console/#/account');

    await signIn(user, FIREFOX_UPDATED, '203.0.113.99').expect(200);
    expect(await settings(user.token)).toMatchObject({
      status: 200,
      text: JSON.stringify({ new_sign_in: true, new_api_key: true }),
    });
    const off = await changeSettings(user.token, { new_sign_in: false }).expect(200);
    expect(off.body).toEqual({ new_sign_in: false, new_api_key: true });
    await signIn(user, CHROME, '198.51.100.1').expect(200);
    expect(await mailsTo(emailOf(user))).toEqual(['New sign-in to your Waygate account']);
  });

  it("tells of a changed password in the user's locale, at most once in 10 minutes", async () => {
    const user = await createUser(t.app);
    await t.as(user.token).patch(`/v1/users/${user.id}/locale`, { locale: 'de' }).expect(200);
    const change = (from: string, to: string) =>
      t.as(user.token).post('/v1/users/me/password', { current_password: from, new_password: to });
    await change(user.password, 'second password 2').expect(200);
    const mail = await smtp.waitFor(emailOf(user));
    expect(mail.subject).toBe('Ihr Waygate-Passwort wurde geändert');
    expect(mail.text).toBe(
      `Guten Tag ${user.username},\n\ndas Passwort Ihres Kontos wurde geändert; Ihre anderen Sitzungen wurden beendet.\n\n` +
        'Wenn Sie das nicht waren, setzen Sie sofort Ihr Passwort zurück und wenden Sie sich an Ihren Administrator.\n',
    );
    await change('second password 2', 'third password 3').expect(200);
    expect(await mailsTo(emailOf(user))).toHaveLength(1);
    t.clock.advance(NOTICE_INTERVAL_SECS * 1000);
    await change('third password 3', 'fourth password 4').expect(200);
    expect(await mailsTo(emailOf(user))).toHaveLength(2);
  });

  it('tells of a new API key unless turned off, of a ban with its reason, and of a scheduled deletion', async () => {
    const user = await createUser(t.app, ['role_user', 'role_developer']);
    await createApiKey(t.app, user.token, { name: 'laptop sync' });
    expect((await smtp.waitFor(emailOf(user))).text).toContain('the API key "laptop sync" was created');
    const other = await createUser(t.app, ['role_user', 'role_developer']);
    await changeSettings(other.token, { new_api_key: false }).expect(200);
    await createApiKey(t.app, other.token, { name: 'quiet' });

    await t.as(admin).post(`/v1/users/${user.id}/ban`, { reason: 'spam' }).expect(200);
    const banned = await smtp.waitFor(emailOf(user), (m) => m.subject === 'Your Waygate account was suspended');
    expect(banned.text).toContain('Reason: spam');
    // A time in a notice is in the reader's chosen time zone (their preferences), named; without one, in UTC.
    /** Bans for an hour; the ban's end as the API answers it, in epoch ms. */
    const banForAnHour = async (userId: string) =>
      Date.parse(
        (await t.as(admin).post(`/v1/users/${userId}/ban`, { duration_seconds: 3600 }).expect(200)).body.data
          .expires_at!,
      );
    const minutes = (ms: number) => new Date(ms).toISOString().slice(0, 16).replace('T', ' ');
    const suspended = (address: string) =>
      smtp.waitFor(address, (m) => m.subject === 'Your Waygate account was suspended' && !m.text.includes('spam'));
    const utcUser = await createUser(t.app);
    const utcEnd = await banForAnHour(utcUser.id);
    expect((await suspended(emailOf(utcUser))).text).toContain(`suspended until ${minutes(utcEnd)} UTC.`);
    const tokyo = await createUser(t.app);
    await t.as(tokyo.token).patch('/v1/users/me/preferences', { time_zone: 'Asia/Tokyo' }).expect(200);
    const tokyoEnd = await banForAnHour(tokyo.id);
    // Japan keeps UTC+09:00 all year.
    expect((await suspended(emailOf(tokyo))).text).toContain(
      `suspended until ${minutes(tokyoEnd + 9 * 3_600_000)} (Asia/Tokyo).`,
    );

    await t.as(admin).delete(`/v1/users/${other.id}`).expect(204);
    expect(await mailsTo(emailOf(other))).toEqual(['Your Waygate account is scheduled for deletion']);
  });

  it('tells of a passkey added and removed, and of two-factor turned on and off', async () => {
    const user = await createUser(t.app);
    const api = t.as(user.token);
    const options = (await api.post('/v1/users/me/passkeys/options', {}).expect(200)).body;
    const passkey = await api
      .post('/v1/users/me/passkeys', {
        name: 'Phone',
        response: newPasskey(softwareAuthenticator('https://waygate.example'), options),
      })
      .expect(201);
    await api.delete(`/v1/users/me/passkeys/${passkey.body.id}`).expect(204);
    const { secret } = (await api.post('/v1/users/me/2fa/setup', {}).expect(200)).body;
    // Codes on the service's clock (other tests of the file move it); the next step's for turning off, as a code works once.
    const code = (steps = 0) => generate({ secret, epoch: Math.floor(t.clock.nowMs() / 1000) + steps * 30 });
    await api.post('/v1/users/me/2fa/verify', { code: await code() }).expect(200);
    await api.delete('/v1/users/me/2fa', { body: { code: await code(1) } }).expect(200);
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
      const options = (await t.as(user.token).post('/v1/users/me/passkeys/options').expect(200)).body;
      await t
        .as(user.token)
        .post('/v1/users/me/passkeys', { name, response: newPasskey(authenticator, options) })
        .expect(201);
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
    const refused = await settings(key.key).expect(403);
    expect(refused.body.code).toBe('session.session_required');
  });

  it('counts addresses of one network as one: IPv4 /24, IPv6 /48', () => {
    expect(networkOf('203.0.113.7')).toBe('203.0.113.0/24');
    expect(networkOf('::ffff:203.0.113.7')).toBe('203.0.113.0/24');
    expect(networkOf('2001:db8:12:3::1')).toBe('2001:db8:12::/48');
    expect(networkOf('2001:db8::1')).toBe('2001:db8:0::/48');
  });
});
