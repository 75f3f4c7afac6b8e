import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from '../../../test/client.js';
import { tokenFromMail, type FakeSmtp } from '../../../test/fakes/smtp.js';
import { buildMailingTestApp, createUser, type TestApp } from '../../../test/helpers.js';
import { buildApp } from '../../app.js';
import { SIGN_IN_POLICY } from './service.js';

describe('sign-in throttle', () => {
  let smtp: FakeSmtp;
  let t: TestApp;
  beforeAll(async () => {
    ({ t, smtp } = await buildMailingTestApp());
  });
  afterAll(() => t.close());

  const signIn = (identifier: string, password: string, ip = '127.0.0.1') =>
    t.as(null).post('/v1/auth/login', { identifier, password }, { remoteAddress: ip });

  async function failTimes(identifier: string, times: number, ip?: string) {
    for (let i = 0; i < times; i++) await signIn(identifier, 'wrong password', ip).expect(401);
  }

  it(`locks an account after ${SIGN_IN_POLICY.maxFailuresPerIdentifier} wrong passwords, even for the right one`, async () => {
    const user = await createUser(t.app);
    await failTimes(user.username, SIGN_IN_POLICY.maxFailuresPerIdentifier, '10.0.0.1');
    const locked = await signIn(user.username, user.password, '10.0.0.2').expect(429);
    expect(locked.body).toEqual({
      error: 'TooManyRequests',
      message: 'Too many failed sign-in attempts; try again later',
      code: 'sign_in.locked_out',
    });
    const retryAfter = Number(locked.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(SIGN_IN_POLICY.lockSecs - 5);
    expect(retryAfter).toBeLessThanOrEqual(SIGN_IN_POLICY.lockSecs);
    // Other accounts are unaffected.
    const other = await createUser(t.app);
    expect((await signIn(other.username, other.password, '10.0.0.2')).status).toBe(200);
  });

  it(`locks an account after ${SIGN_IN_POLICY.maxFailuresPerIdentifier} wrong passwords in all, whether its username or its email was typed`, async () => {
    const user = await createUser(t.app);
    const email = `${user.username}@example.org`;
    for (let i = 0; i < SIGN_IN_POLICY.maxFailuresPerIdentifier; i++) {
      expect((await signIn(i % 2 ? user.username : email, 'wrong password', `10.0.4.${i}`)).status).toBe(401);
    }
    for (const identifier of [user.username, email, user.username.toUpperCase()]) {
      const locked = await signIn(identifier, user.password, '10.0.4.200');
      expect({ identifier, status: locked.status, code: 'code' in locked.body && locked.body.code }).toEqual({
        identifier,
        status: 429,
        code: 'sign_in.locked_out',
      });
    }
    // The typed strings alone never reached their limit; an identifier naming nobody still locks on its own count.
    await failTimes('nobody_alternating', SIGN_IN_POLICY.maxFailuresPerIdentifier - 1, '10.0.4.201');
    expect((await signIn('nobody_alternating', 'x', '10.0.4.202')).status).toBe(401);
    expect((await signIn('nobody_alternating', 'x', '10.0.4.202')).status).toBe(429);
  });

  it('lets no more than the allowed attempts reach the password check, however many arrive at once on two nodes', async () => {
    const user = await createUser(t.app);
    const second = await buildApp(t.config, { database: t.database, kv: t.kv, clock: t.clock }, { logger: false });
    try {
      const attempt = (node: typeof t.app, password: string, i: number) =>
        client(node).post('/v1/auth/login', { identifier: user.username, password }, { remoteAddress: `10.0.9.${i}` });
      const burst = await Promise.all([
        ...Array.from({ length: 60 }, (_, i) => attempt(i % 2 ? t.app : second, 'wrong password', i)),
        attempt(second, user.password, 200),
      ]);
      const statuses = burst.map((response) => response.status);
      const checked = statuses.filter((status) => status === 401 || status === 200).length;
      expect(checked).toBeLessThanOrEqual(SIGN_IN_POLICY.maxFailuresPerIdentifier);
      expect(statuses.filter((status) => status === 429).length).toBe(statuses.length - checked);
      // The lock holds afterwards, for the right password too.
      expect((await attempt(t.app, user.password, 201)).status).toBe(429);
    } finally {
      await second.close();
    }
  });

  it('lifts the lock when its time is up', async () => {
    const user = await createUser(t.app);
    await failTimes(user.username, SIGN_IN_POLICY.maxFailuresPerIdentifier, '10.0.1.1');
    t.clock.advance(SIGN_IN_POLICY.lockSecs * 1000 - 1000);
    expect((await signIn(user.username, user.password, '10.0.1.2')).status).toBe(429);
    t.clock.advance(1001);
    expect((await signIn(user.username, user.password, '10.0.1.2')).status).toBe(200);
  });

  it('treats an identifier nobody has exactly like an existing one (no account enumeration)', async () => {
    await failTimes('nobody_here', SIGN_IN_POLICY.maxFailuresPerIdentifier, '10.0.1.1');
    expect((await signIn('nobody_here', 'anything', '10.0.1.2')).status).toBe(429);
  });

  it('locks an IP that keeps failing across many identifiers', async () => {
    for (let i = 0; i < SIGN_IN_POLICY.maxFailuresPerIp; i++)
      expect((await signIn(`guess_${i}`, 'x', '10.0.2.1')).status).toBe(401);
    const user = await createUser(t.app);
    expect((await signIn(user.username, user.password, '10.0.2.1')).status).toBe(429);
    expect((await signIn(user.username, user.password, '10.0.2.2')).status).toBe(200);
  });

  it('a completed password reset lifts the lock of the account', async () => {
    const user = await createUser(t.app);
    const email = `${user.username}@example.org`;
    await failTimes(email, SIGN_IN_POLICY.maxFailuresPerIdentifier, '10.0.3.1');
    expect((await signIn(email, user.password, '10.0.3.2')).status).toBe(429);
    await t.as(null).post('/v1/auth/reset-password', { email });
    const token = tokenFromMail(await smtp.waitFor(email));
    await t.as(null).post('/v1/auth/reset-password/complete', { token, new_password: 'fresh password 1' }).expect(200);
    expect((await signIn(email, 'fresh password 1', '10.0.3.2')).status).toBe(200);
    // The failures were forgotten too: one typo after the reset does not lock the account again.
    expect((await signIn(email, 'typo', '10.0.3.2')).status).toBe(401);
    expect((await signIn(email, 'fresh password 1', '10.0.3.2')).status).toBe(200);
  });
});
