import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakePwnedPasswords, type FakePwnedPasswords } from '../../../test/fakes/pwned-passwords.js';
import { tokenFromMail, type FakeSmtp } from '../../../test/fakes/smtp.js';
import { buildMailingTestApp, createUser, type TestApp, twoNodes } from '../../../test/helpers.js';
import { BREACH_CHECK_TIMEOUT_MS } from './breached-passwords.js';

const LEAKED = 'password1234';
const SEEN_TWICE = 'seen twice only';

describe('breached passwords (Pwned Passwords range API)', () => {
  let pwned: FakePwnedPasswords;
  let smtp: FakeSmtp;
  let t: TestApp;
  beforeAll(async () => {
    pwned = await startFakePwnedPasswords();
    pwned.breached.set(LEAKED, 2_413_945).set(SEEN_TWICE, 2);
    ({ t, smtp } = await buildMailingTestApp({
      config: { pwnedPasswords: { url: pwned.url, minCount: 3 } },
      captureLogs: true,
    }));
  });
  afterAll(async () => {
    await t.close();
    await pwned.close();
  });
  beforeEach(() => {
    pwned.mode = 'ok';
  });

  let counter = 0;
  const register = (password: string) => {
    const name = `pwned_${process.pid}_${++counter}`;
    return t.as(null).post('/v1/auth/register', { email: `${name}@example.org`, username: name, password });
  };
  const BREACHED = (field: string) => ({
    error: 'BadRequest',
    code: 'password.breached',
    message: `${field} appears in known data breaches (Pwned Passwords); choose another password`,
  });

  it('refuses a breached password at registration, sending only the first five hex characters of its SHA-1, with padding asked for', async () => {
    const before = pwned.requests.length;
    const response = await register(LEAKED).expect(400);
    expect(response.body).toEqual(BREACHED('password'));
    expect(response.text).not.toContain(LEAKED);
    const [request] = pwned.requests.slice(before);
    // SHA-1("password1234") = E6B6AFBD6D76BB5D2041542D7D2E3FAC5BB05593
    expect(request!.path).toBe('/range/E6B6A');
    expect(request!.headers['add-padding']).toBe('true');
  });

  it('accepts a password seen fewer times than PWNED_PASSWORDS_MIN_COUNT, and one whose suffix is only a count-0 padding line', async () => {
    expect((await register(SEEN_TWICE)).status).toBe(200);
    const padded = 'only ever a decoy line';
    pwned.padded.add(padded);
    expect((await register(padded)).status).toBe(200);
  });

  it('refuses a breached password on reset (the token stays usable) and on change', async () => {
    const user = await createUser(t.app);
    const email = `${user.username}@example.org`;
    await t.as(null).post('/v1/auth/reset-password', { email });
    const token = tokenFromMail(await smtp.waitFor(email));
    const reset = await t.as(null).post('/v1/auth/reset-password/complete', { token, new_password: LEAKED });
    expect(reset.body).toEqual(BREACHED('new_password'));

    const api = t.as(user.token);
    const change = await api.post('/v1/users/me/password', { current_password: user.password, new_password: LEAKED });
    expect(change.body).toEqual(BREACHED('new_password'));
    expect((await api.get('/v1/users/me')).status).toBe(200);

    await t
      .as(null)
      .post('/v1/auth/reset-password/complete', { token, new_password: 'not in any breach yet' })
      .expect(200);
  });

  it('fails open: a service that does not answer within a second lets the password through', async () => {
    pwned.mode = 'hang';
    const started = Date.now();
    expect((await register(LEAKED)).status).toBe(200);
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThanOrEqual(BREACH_CHECK_TIMEOUT_MS - 50);
    expect(waited).toBeLessThan(BREACH_CHECK_TIMEOUT_MS + 3000);
  });

  // Each node logs the outage once (its own log, throttled in its memory): on two nodes it is said twice.
  it.skipIf(twoNodes)(
    'logs an outage once, not once per password, and says when the service answers again',
    async () => {
      const said = (text: string) => t.logs().filter((line) => String(line.msg).startsWith(text)).length;
      expect((await register('answered normally')).status).toBe(200);
      const before = said('breached-password check unavailable');
      pwned.mode = 'failing';
      expect((await register('first while down')).status).toBe(200);
      expect((await register('second while down')).status).toBe(200);
      expect(said('breached-password check unavailable')).toBe(before + 1);
      pwned.mode = 'ok';
      expect((await register(LEAKED)).status).toBe(400);
      expect(said('breached-password check answers again')).toBeGreaterThanOrEqual(1);
      expect(JSON.stringify(t.logs())).not.toContain(LEAKED);
    },
  );
});
