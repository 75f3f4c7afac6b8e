import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '../../../test/client.js';
import { tokenFromMail, type FakeSmtp } from '../../../test/fakes/smtp.js';
import { buildMailingTestApp, createUser, login, type TestApp } from '../../../test/helpers.js';
import { hashToken } from '../../platform/auth/tokens.js';
import { RESET_REQUESTED_MESSAGE } from './service.js';

describe('password reset', () => {
  let smtp: FakeSmtp;
  let t: TestApp;
  let anon: Client;
  beforeAll(async () => {
    ({ t, smtp } = await buildMailingTestApp());
    anon = t.as(null);
  });
  afterAll(() => t.close());

  const emailOf = (user: { username: string }) => `${user.username}@example.org`;

  // Reset mails only: a completed reset also sends the security notice of a changed password.
  const resetMailsTo = (email: string) =>
    smtp.received.filter((mail) => mail.to === email && mail.subject === 'Reset your Waygate password');

  async function requestReset(email: string) {
    const before = resetMailsTo(email).length;
    const response = await anon.post('/v1/auth/reset-password', { email: email.toUpperCase() }).expect(200);
    expect(response.body).toEqual({ message: RESET_REQUESTED_MESSAGE });
    // The mail goes out after the response (its timing must not reveal the account): wait for the new one.
    await smtp.waitFor(email, () => resetMailsTo(email).length > before);
    return tokenFromMail(resetMailsTo(email).at(-1)!);
  }

  it('answers the same 200 for an unknown address and sends nothing', async () => {
    const response = await anon.post('/v1/auth/reset-password', { email: 'nobody@example.org' }).expect(200);
    expect(response.body).toEqual({ message: RESET_REQUESTED_MESSAGE });
    // (Other tests' security notices may arrive meanwhile: only a mail to this address would be wrong.)
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(smtp.received.filter((mail) => mail.to === 'nobody@example.org')).toEqual([]);
  });

  it('mails a 1-hour link; completing it sets the password, ends every session and works once', async () => {
    const user = await createUser(t.app);
    const otherSession = await login(t.app, user.username, user.password);
    const token = await requestReset(emailOf(user));
    const row = await t.database.db
      .selectFrom('account_tokens')
      .selectAll()
      .where('user_id', '=', user.id)
      .where('purpose', '=', 'password_reset')
      .executeTakeFirstOrThrow();
    const minutes = (row.expires_at.getTime() - Date.now()) / 60_000;
    expect(minutes).toBeGreaterThan(59);
    expect(minutes).toBeLessThanOrEqual(60);
    expect(row.token_hash).not.toBe(token);

    const done = await anon
      .post('/v1/auth/reset-password/complete', { token, new_password: 'a brand new password' })
      .expect(200);
    expect(done.body).toEqual({ message: expect.any(String) });

    for (const session of [user.token, otherSession]) {
      await t.as(session).get(`/v1/users/${user.id}/permissions`).expect(401);
    }
    await anon.post('/v1/auth/login', { identifier: user.username, password: user.password }).expect(401);
    await anon.post('/v1/auth/login', { identifier: user.username, password: 'a brand new password' }).expect(200);
    const again = await anon.post('/v1/auth/reset-password/complete', { token, new_password: 'yet another password' });
    expect(again.body).toEqual({
      error: 'BadRequest',
      message: 'Invalid or expired token',
      code: 'mailed_token.invalid',
    });
    const events = await t.database.db
      .selectFrom('audit_events')
      .select('event_type')
      .where('user_id', '=', user.id)
      .execute();
    expect(events.map((e) => e.event_type)).toEqual(
      expect.arrayContaining(['password_reset_requested', 'password_changed']),
    );
  });

  it('sends one mail per address per minute, whatever the number of requests', async () => {
    const user = await createUser(t.app);
    await requestReset(emailOf(user));
    const again = await anon.post('/v1/auth/reset-password', { email: emailOf(user) });
    expect(again.body).toEqual({ message: RESET_REQUESTED_MESSAGE });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(resetMailsTo(emailOf(user))).toHaveLength(1);
    const rows = await t.database.db.selectFrom('account_tokens').select('id').where('user_id', '=', user.id).execute();
    expect(rows).toHaveLength(1);
  });

  it('a newer request (after the cooldown) replaces the older token', async () => {
    const user = await createUser(t.app);
    const first = await requestReset(emailOf(user));
    await t.kv.delete(`reset:cooldown:${hashToken(emailOf(user))}`); // the minute has passed
    const second = await requestReset(emailOf(user));
    expect(second).not.toBe(first);
    await anon.post('/v1/auth/reset-password/complete', { token: first, new_password: 'long enough pw' }).expect(400);
    await anon.post('/v1/auth/reset-password/complete', { token: second, new_password: 'long enough pw' }).expect(200);
  });

  it('400 for an expired token, an unknown token and a short password (the token stays usable)', async () => {
    const user = await createUser(t.app);
    const token = await requestReset(emailOf(user));
    const short = await anon.post('/v1/auth/reset-password/complete', { token, new_password: 'short' });
    expect(short.body).toEqual({
      error: 'BadRequest',
      message: 'new_password must be at least 8 characters',
      code: 'user.password_too_short',
    });
    await anon
      .post('/v1/auth/reset-password/complete', { token: 'unknown', new_password: 'long enough pw' })
      .expect(400);
    // An hour later (the app's clock moves; the test does not wait), for this request only.
    const anHour = 60 * 60_000 + 1000;
    t.clock.advance(anHour);
    const expired = await anon
      .post('/v1/auth/reset-password/complete', { token, new_password: 'long enough pw' })
      .finally(() => t.clock.advance(-anHour));
    expect(expired.body).toEqual({
      error: 'BadRequest',
      message: 'Invalid or expired token',
      code: 'mailed_token.invalid',
    });
    await anon.post('/v1/auth/login', { identifier: user.username, password: user.password }).expect(200);
  });
});
