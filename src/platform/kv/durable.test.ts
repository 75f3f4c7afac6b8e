import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestClock } from '../../../test/clock.js';
import { openTestDatabase, usesPostgres } from '../../../test/helpers.js';
import type { Database } from '../db/database.js';
import { DatabaseStore } from './durable.js';

// The store over kv_durable, on PGlite (embedded project) and PostgreSQL (postgres+redis project).
describe(`durable store (${usesPostgres ? 'postgres' : 'embedded'})`, () => {
  let database: Database;
  let store: DatabaseStore;
  const clock = createTestClock();
  clock.freeze(new Date('2031-03-01T10:00:00Z'));
  const start = clock.nowMs(); // the start of a 60 s window (and of a 15-minute one)
  beforeAll(async () => {
    database = await openTestDatabase();
    store = new DatabaseStore(database.db, clock);
  });
  afterAll(() => database.close());

  it('stores, reads, replaces and deletes values', async () => {
    expect(await store.get('greeting')).toBeNull();
    await store.set('greeting', 'hello');
    expect(await store.get('greeting')).toBe('hello');
    await store.set('greeting', 'again', 60);
    expect(await store.get('greeting')).toBe('again');
    await store.delete('greeting');
    expect(await store.get('greeting')).toBeNull();
  });

  it('expires values by the clock, and a value without a TTL never', async () => {
    await store.set('short', 'lived', 10);
    await store.set('forever', 'kept');
    clock.advance(9_999);
    expect(await store.get('short')).toBe('lived');
    clock.advance(1);
    expect(await store.get('short')).toBeNull();
    clock.advance(365 * 24 * 3600_000);
    expect(await store.get('forever')).toBe('kept');
    clock.freeze(new Date(start));
  });

  it('sets a value only when absent, exactly once under concurrency, and again once it has expired', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => store.setIfAbsent('nonce', `claim-${i}`, 30)),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await store.get('nonce')).toBe(`claim-${results.indexOf(true)}`);
    clock.advance(29_999);
    expect(await store.setIfAbsent('nonce', 'late', 30)).toBe(false);
    clock.advance(1);
    expect(await store.setIfAbsent('nonce', 'after', 30)).toBe(true);
    expect(await store.get('nonce')).toBe('after');
    await store.set('kept', 'x');
    expect(await store.setIfAbsent('kept', 'y', 30)).toBe(false);
    clock.freeze(new Date(start));
  });

  it('counts hits atomically in a fixed window and reports the window end', async () => {
    const now = start + 30_000;
    const counts = await Promise.all(Array.from({ length: 25 }, () => store.hitWindow('rl:client', 60, now)));
    expect(counts.map((c) => c.count).sort((a, b) => a - b)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
    expect(new Set(counts.map((c) => c.resetAt))).toEqual(new Set([(start + 60_000) / 1000]));
    expect(await store.hitWindow('rl:client', 60, now, 5)).toEqual({ count: 30, resetAt: (start + 60_000) / 1000 });
  });

  it('starts a new count in the next window, keeps keys apart, and counts at the clock when no time is given', async () => {
    await store.hitWindow('rl:a', 60, start);
    expect((await store.hitWindow('rl:a', 60, start + 59_000)).count).toBe(2);
    expect((await store.hitWindow('rl:b', 60, start + 59_000)).count).toBe(1);
    expect(await store.hitWindow('rl:a', 60, start + 60_000)).toEqual({ count: 1, resetAt: start / 1000 + 120 });
    expect(await store.hitWindow('rl:a', 60)).toEqual({ count: 3, resetAt: start / 1000 + 60 });
  });

  it('takes back one hit (never below zero), and resets the count of the current window only', async () => {
    await store.hitWindow('rl:reset', 60, start);
    await store.hitWindow('rl:reset', 60, start);
    await store.unhitWindow('rl:reset', 60, start + 500);
    expect((await store.hitWindow('rl:reset', 60, start + 600)).count).toBe(2);
    await store.hitWindow('rl:reset', 60, start + 60_000);
    await store.resetWindow('rl:reset', 60, start + 1_000);
    expect((await store.hitWindow('rl:reset', 60, start + 2_000)).count).toBe(1);
    expect((await store.hitWindow('rl:reset', 60, start + 60_000)).count).toBe(2);
    await store.unhitWindow('rl:once', 60, start);
    await store.hitWindow('rl:once', 60, start);
    await store.unhitWindow('rl:once', 60, start);
    await store.unhitWindow('rl:once', 60, start);
    expect((await store.hitWindow('rl:once', 60, start)).count).toBe(1);
  });

  it('purges the rows that have expired and keeps the live ones', async () => {
    await database.db.deleteFrom('kv_durable').execute();
    await store.set('lock', 'until', 900);
    await store.set('forever', 'kept');
    await store.setIfAbsent('marker', '1', 30);
    await store.hitWindow('failures', 900, start); // its window ends at start + 900 s
    clock.advance(30_000);
    expect(await store.purgeExpired()).toBe(1);
    clock.advance(870_000);
    expect(await store.purgeExpired()).toBe(2);
    expect(await database.db.selectFrom('kv_durable').select(['key', 'value', 'expires_at']).execute()).toEqual([
      { key: 'forever', value: 'kept', expires_at: null },
    ]);
    clock.freeze(new Date(start));
  });
});
