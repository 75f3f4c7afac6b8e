import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestKeyValueStore, usesRedis } from '../../../test/helpers.js';
import type { KeyValueStore } from './index.js';

// The same suite runs against the in-process store (embedded project) and Redis (postgres+redis project).
describe(`key-value store (${usesRedis ? 'redis' : 'memory'})`, () => {
  let kv: KeyValueStore;
  beforeAll(async () => {
    kv = await openTestKeyValueStore();
  });
  afterAll(() => kv.close());

  it('is the implementation this run is meant to test', () => {
    expect(kv.kind).toBe(usesRedis ? 'redis' : 'memory');
  });

  it('stores, reads and deletes values', async () => {
    expect(await kv.get('greeting')).toBeNull();
    await kv.set('greeting', 'hello');
    expect(await kv.get('greeting')).toBe('hello');
    await kv.set('greeting', 'again');
    expect(await kv.get('greeting')).toBe('again');
    await kv.delete('greeting');
    expect(await kv.get('greeting')).toBeNull();
  });

  it('reads several keys in one call, null for each missing or expired one, in their order', async () => {
    expect(await kv.getMany([])).toEqual([]);
    await kv.set('get-many:a', 'first');
    await kv.set('get-many:b', 'second');
    await kv.set('get-many:short', 'gone', 0.05);
    await sleep(100);
    expect(await kv.getMany(['get-many:b', 'get-many:missing', 'get-many:a', 'get-many:short', 'get-many:b'])).toEqual([
      'second',
      null,
      'first',
      null,
      'second',
    ]);
  });

  it('expires values after their TTL', async () => {
    await kv.set('short', 'lived', 0.2);
    await kv.set('long', 'lived', 60);
    expect(await kv.get('short')).toBe('lived');
    await sleep(300);
    expect(await kv.get('short')).toBeNull();
    expect(await kv.get('long')).toBe('lived');
  });

  it('sets a value only when absent, exactly once under concurrency', async () => {
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => kv.setIfAbsent('nonce', `claim-${i}`, 60)));
    expect(results.filter(Boolean)).toHaveLength(1);
    const winner = results.indexOf(true);
    expect(await kv.get('nonce')).toBe(`claim-${winner}`);
  });

  it('lets a single-use key be claimed again once its TTL has passed', async () => {
    expect(await kv.setIfAbsent('ticket', 'a', 0.2)).toBe(true);
    expect(await kv.setIfAbsent('ticket', 'b', 0.2)).toBe(false);
    await sleep(300);
    expect(await kv.setIfAbsent('ticket', 'c', 0.2)).toBe(true);
  });

  it('keeps the newest record by timestamp, also under concurrency', async () => {
    const keep = async (key: string, value: string, ttl: number, ifAbsent: 'set' | 'skip') =>
      (await kv.keepNewest([{ key, value }], ttl, ifAbsent))[0];
    const record = (second: number) =>
      JSON.stringify({ id: `p${second}`, timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString() });
    expect(await keep('latest', record(10), 60, 'skip')).toBe('absent');
    expect(await kv.get('latest')).toBeNull();
    expect(await keep('latest', 'none', 60, 'set')).toBe('stored');
    expect(await keep('latest', record(10), 60, 'skip')).toBe('stored'); // a record replaces a placeholder
    expect(await keep('latest', 'none', 60, 'set')).toBe('kept'); // ... but not the other way round
    expect(await keep('latest', record(9), 60, 'skip')).toBe('kept');
    expect(await keep('latest', record(11), 60, 'skip')).toBe('stored');
    expect(await keep('latest', record(11), 60, 'skip')).toBe('stored'); // of equal ones, the last wins
    expect(await kv.get('latest')).toBe(record(11));

    const seconds = Array.from({ length: 30 }, (_, i) => (i * 17) % 30); // 0..29 shuffled
    await Promise.all(seconds.map((s) => keep('latest:race', record(s), 60, 'set')));
    expect(await kv.get('latest:race')).toBe(record(29));
  });

  it('keeps the newest of several keys in one call, an outcome per key in their order', async () => {
    const record = (second: number) =>
      JSON.stringify({ timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString() });
    await kv.set('many:older', record(5), 60);
    await kv.set('many:newer', record(50), 60);
    const offered = [
      { key: 'many:older', value: record(10) },
      { key: 'many:newer', value: record(10) },
      { key: 'many:missing', value: record(10) },
    ];
    expect(await kv.keepNewest(offered, 60, 'skip')).toEqual(['stored', 'kept', 'absent']);
    expect([await kv.get('many:older'), await kv.get('many:newer'), await kv.get('many:missing')]).toEqual([
      record(10),
      record(50),
      null,
    ]);
    expect(await kv.keepNewest(offered, 60, 'set')).toEqual(['stored', 'kept', 'stored']);
    expect(await kv.get('many:missing')).toBe(record(10));
    expect(await kv.keepNewest([], 60, 'set')).toEqual([]);
  });

  it('keeps the newest of more keys than one script call takes, the outcomes still in order', async () => {
    const record = (second: number) =>
      JSON.stringify({ timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString() });
    const keys = Array.from({ length: 1_201 }, (_, i) => `many:chunked:${i}`);
    // Key i holds second i % 47 (a period no call's size shares): second 23 replaces only those holding 0 to 23.
    expect(
      await kv.keepNewest(
        keys.map((key, i) => ({ key, value: record(i % 47) })),
        60,
        'set',
      ),
    ).toEqual(Array(1_201).fill('stored'));
    const outcomes = await kv.keepNewest(
      keys.map((key) => ({ key, value: record(23) })),
      60,
      'set',
    );
    expect(outcomes).toEqual(keys.map((_, i) => (i % 47 <= 23 ? 'stored' : 'kept')));
    expect([await kv.get('many:chunked:1175'), await kv.get('many:chunked:1200')]).toEqual([
      record(23),
      record(1200 % 47),
    ]);
  });

  it.runIf(usesRedis)('keeps working after Redis forgot its scripts (restart, SCRIPT FLUSH)', async () => {
    const admin = new Redis(process.env.TEST_REDIS_URL!);
    try {
      const record = JSON.stringify({ id: 'p1', timestamp: '2026-01-01T00:00:01.000Z' });
      const hit = { key: 'rl:flushed', windowSecs: 60, at: futureWindowStart(), hits: 1 };
      expect(await kv.keepNewest([{ key: 'latest:flushed', value: record }], 60, 'set')).toEqual(['stored']);
      expect((await kv.hitWindows([hit]))[0]!.count).toBe(1);
      await admin.script('FLUSH');
      expect(await kv.keepNewest([{ key: 'latest:flushed', value: record }], 60, 'set')).toEqual(['stored']);
      expect((await kv.hitWindows([hit]))[0]!.count).toBe(2);
      await admin.script('FLUSH');
      expect((await kv.hitWindow(hit.key, 60, hit.at)).count).toBe(3);
    } finally {
      admin.disconnect();
    }
  });

  it('counts hits atomically in a fixed window and reports the window end', async () => {
    const now = futureWindowStart() + 30_000; // 30 s into a 60 s window
    const counts = await Promise.all(Array.from({ length: 25 }, () => kv.hitWindow('rl:client', 60, now)));
    expect(counts.map((c) => c.count).sort((a, b) => a - b)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
    expect(new Set(counts.map((c) => c.resetAt))).toEqual(new Set([(now + 30_000) / 1000]));
  });

  it('starts a new count in the next window and keeps keys apart', async () => {
    const start = futureWindowStart();
    await kv.hitWindow('rl:a', 60, start);
    expect((await kv.hitWindow('rl:a', 60, start + 59_000)).count).toBe(2);
    expect((await kv.hitWindow('rl:b', 60, start + 59_000)).count).toBe(1);
    const next = await kv.hitWindow('rl:a', 60, start + 60_000);
    expect(next).toEqual({ count: 1, resetAt: start / 1000 + 120 });
  });

  it('counts hits of several windows in one call, a count per window in their order', async () => {
    const start = futureWindowStart();
    await kv.hitWindow('rl:many:a', 60, start);
    const counts = await kv.hitWindows([
      { key: 'rl:many:a', windowSecs: 60, at: start + 1_000, hits: 3 },
      { key: 'rl:many:b', windowSecs: 3600, at: start, hits: 2 },
      { key: 'rl:many:a', windowSecs: 60, at: start + 60_000, hits: 5 },
    ]);
    expect(counts).toEqual([
      { count: 4, resetAt: start / 1000 + 60 },
      { count: 2, resetAt: (Math.floor(start / 3_600_000) + 1) * 3600 },
      { count: 5, resetAt: start / 1000 + 120 },
    ]);
    expect((await kv.hitWindow('rl:many:b', 3600, start)).count).toBe(3);
    expect(await kv.hitWindows([])).toEqual([]);
  });

  it('counts more windows than one script call takes, the counts still in order', async () => {
    const start = futureWindowStart();
    const hits = Array.from({ length: 1_201 }, (_, i) => ({
      key: `rl:chunked:${i}`,
      windowSecs: 60,
      at: start,
      hits: i + 1,
    }));
    expect((await kv.hitWindows(hits)).map(({ count }) => count)).toEqual(hits.map((hit) => hit.hits));
    expect((await kv.hitWindows(hits)).map(({ count }) => count)).toEqual(hits.map((hit) => 2 * hit.hits));
  });

  it('takes back one hit, and resets the count of the current window only', async () => {
    const start = futureWindowStart();
    await kv.hitWindow('rl:reset', 60, start);
    await kv.hitWindow('rl:reset', 60, start);
    await kv.unhitWindow('rl:reset', 60, start + 500);
    expect((await kv.hitWindow('rl:reset', 60, start + 600)).count).toBe(2);
    await kv.hitWindow('rl:reset', 60, start + 60_000);
    await kv.resetWindow('rl:reset', 60, start + 1_000);
    expect((await kv.hitWindow('rl:reset', 60, start + 2_000)).count).toBe(1);
    expect((await kv.hitWindow('rl:reset', 60, start + 60_000)).count).toBe(2);
  });

  it('delivers published messages to every subscriber until they unsubscribe', async () => {
    const first: string[] = [];
    const second: string[] = [];
    const stopFirst = await kv.subscribe('events', (m) => first.push(m));
    const stopSecond = await kv.subscribe('events', (m) => second.push(m));
    await kv.publish('events', 'one');
    await kv.publish('other-channel', 'ignored');
    await waitFor(() => first.length === 1 && second.length === 1);
    await stopFirst();
    await kv.publish('events', 'two');
    await waitFor(() => second.length === 2);
    await sleep(50);
    expect(first).toEqual(['one']);
    expect(second).toEqual(['one', 'two']);
    await stopSecond();
  });

  it('answers ping', async () => {
    await expect(kv.ping()).resolves.toBeUndefined();
  });
});

// Counters expire at their window's end in real time, so tests use windows that have not ended yet.
function futureWindowStart(): number {
  return (Math.floor(Date.now() / 60_000) + 2) * 60_000;
}

async function waitFor(condition: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(10);
  }
}
