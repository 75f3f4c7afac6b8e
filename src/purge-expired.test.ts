import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from './platform/auth/tokens.js';
import { buildTestApp, createUser, usesRedis, type TestApp } from '../test/helpers.js';

describe('purging rows that can never be used again', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(() => t.close());

  it('deletes expired sessions, registrations, spent tokens, finished 2FA challenges and durable keys, and keeps live ones', async () => {
    const { db } = t.database;
    const user = await createUser(t.app);
    const past = new Date(Date.now() - 60_000);
    const future = new Date(Date.now() + 3600_000);
    await db
      .insertInto('sessions')
      .values({
        token_hash: hashToken('old-session'),
        user_id: user.id,
        provider: 'email',
        ip_address: null,
        user_agent: null,
        expires_at: past,
      })
      .execute();
    await db
      .insertInto('pending_registrations')
      .values([
        {
          email: 'old@example.org',
          username: 'old_one',
          password_hash: 'x',
          token_hash: hashToken('r1'),
          expires_at: past,
        },
        {
          email: 'new@example.org',
          username: 'new_one',
          password_hash: 'x',
          token_hash: hashToken('r2'),
          expires_at: future,
        },
      ])
      .execute();
    await db
      .insertInto('account_tokens')
      .values([
        { purpose: 'password_reset', user_id: user.id, token_hash: hashToken('t1'), expires_at: past },
        {
          purpose: 'email_link',
          user_id: user.id,
          token_hash: hashToken('t2'),
          expires_at: future,
          used_at: new Date(),
          password_hash: 'x',
          email: 'a@example.org',
        },
        { purpose: 'password_reset', user_id: user.id, token_hash: hashToken('t3'), expires_at: future },
      ])
      .execute();
    await db
      .insertInto('two_factor_challenges')
      .values([
        { token_hash: hashToken('c1'), user_id: user.id, provider: 'email', expires_at: past },
        { token_hash: hashToken('c2'), user_id: user.id, provider: 'email', expires_at: future },
      ])
      .execute();
    // Sign-in locks and replay markers are kept in the database when there is no Redis (with Redis, Redis expires them).
    await db
      .insertInto('kv_durable')
      .values([
        { key: 'signin:account:old:lock', value: '1', expires_at: past },
        { key: 'signin:account:new:lock', value: '1', expires_at: future },
      ])
      .execute();

    expect(await t.app.services.purgeExpired()).toEqual({
      sessions: 1,
      pending_registrations: 1,
      account_tokens: 2,
      two_factor_challenges: 1,
      deleted_users: 0,
      oauth_artifacts: 0,
      oauth_signing_keys_retired: 0,
      community_member_staging: 0,
      sign_in_devices: 0,
      durable_keys: usesRedis ? 0 : 1,
    });
    expect(
      await db.selectFrom('kv_durable').select('key').where('key', 'like', '%:lock').orderBy('key', 'desc').execute(),
    ).toEqual(
      usesRedis
        ? [{ key: 'signin:account:old:lock' }, { key: 'signin:account:new:lock' }]
        : [{ key: 'signin:account:new:lock' }],
    );
    expect(await db.selectFrom('pending_registrations').select('username').execute()).toEqual([
      { username: 'new_one' },
    ]);
    expect(await db.selectFrom('account_tokens').select('token_hash').execute()).toEqual([
      { token_hash: hashToken('t3') },
    ]);
    expect(await db.selectFrom('two_factor_challenges').select('token_hash').execute()).toEqual([
      { token_hash: hashToken('c2') },
    ]);
    // The user's live session (from signing in) is still there and works.
    expect(
      (
        await t.app.inject({
          url: `/v1/users/${user.id}/permissions`,
          headers: { authorization: `Bearer ${user.token}` },
        })
      ).statusCode,
    ).toBe(200);
  });
});
