import type { FastifyRequest } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createUser, login, TEST_ADMIN, type TestApp } from '../../../test/helpers.js';
import { createTestClock, type TestClock } from '../../../test/clock.js';
import { createSessionStore } from './store.js';

/**
 * The store's race paths, which no HTTP request can time: the session insert is refused because a ban is
 * in force, and the ban is gone (or a new one has begun) by the time it is read for the 403.
 */
let t: TestApp;
let adminToken: string;
beforeAll(async () => {
  t = await buildTestApp();
  adminToken = await login(t.app, 'admin', TEST_ADMIN.password);
});
afterAll(() => t.close());

const request = { ip: '127.0.0.1', headers: { 'user-agent': 'store test' } } as FastifyRequest;

async function bannedUserFor(seconds: number) {
  const user = await createUser(t.app);
  await t.as(adminToken).post(`/v1/users/${user.id}/ban`, { duration_seconds: seconds }).expect(200);
  return user;
}

/**
 * A store whose ban read runs `onBanRead` instead of the bans module's check: what happened meanwhile,
 * told through the store's clock or by throwing the refusal.
 */
function storeWith(onBanRead: (clock: TestClock) => void) {
  const clock = createTestClock();
  clock.freeze(t.clock.now());
  const banReads: string[] = [];
  const store = createSessionStore({
    db: t.database.db,
    clock,
    credentials: { invalidate: async () => {} },
    audit: { record: async () => {} } as never,
    accessOfUser: async () => ({ permissions: [], roles: [], isSuperAdmin: false }),
    assertNotBanned: async (userId) => {
      banReads.push(userId);
      onBanRead(clock);
    },
  });
  return { store, banReads };
}

const sessionsOf = (userId: string) =>
  t.database.db.selectFrom('sessions').select('id').where('user_id', '=', userId).execute();

describe('a session made while a ban ends', () => {
  it('is made on the second try when the ban ended between the refused insert and the ban read', async () => {
    const user = await bannedUserFor(60);
    const before = await sessionsOf(user.id);
    const { store, banReads } = storeWith((clock) => clock.advance(61_000));
    const session = await store.create(request, { userId: user.id, provider: 'email' }, t.database.db);
    expect(banReads).toEqual([user.id]);
    expect(session.token).toMatch(/^ses_/);
    expect((await sessionsOf(user.id)).map((row) => row.id)).toEqual([...before.map((row) => row.id), session.id]);
  });

  it('is refused, and nothing written, when the ban read answers a ban in force', async () => {
    const user = await bannedUserFor(60);
    const before = await sessionsOf(user.id);
    const refusal = new Error('banned');
    const { store, banReads } = storeWith(() => {
      throw refusal;
    });
    await expect(store.create(request, { userId: user.id, provider: 'email' }, t.database.db)).rejects.toBe(refusal);
    expect(banReads).toEqual([user.id]);
    expect(await sessionsOf(user.id)).toEqual(before);
  });

  it('is refused when a new ban began after the first one ended (the second ban read answers it)', async () => {
    const user = await bannedUserFor(60);
    const before = await sessionsOf(user.id);
    const refusal = new Error('banned again');
    let reads = 0;
    const { store, banReads } = storeWith(() => {
      // The first read finds no ban (it had ended); by the second insert a new one is in force, so the
      // clock stays within the original ban and the second read answers it.
      if (++reads === 2) throw refusal;
    });
    await expect(store.create(request, { userId: user.id, provider: 'email' }, t.database.db)).rejects.toBe(refusal);
    expect(banReads).toEqual([user.id, user.id]);
    expect(await sessionsOf(user.id)).toEqual(before);
  });
});
