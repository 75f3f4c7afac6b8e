import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestKeyValueStore } from '../../test/helpers.js';
import type { KeyValueStore } from './kv/index.js';
import { createScheduler } from './scheduler.js';

describe('scheduler', () => {
  let kv: KeyValueStore;
  beforeAll(async () => {
    kv = await openTestKeyValueStore();
  });
  afterAll(() => kv.close());

  const log = pino({ level: 'silent' });
  const HOUR = 3600_000;

  it('runs a job once per interval across nodes sharing the store', async () => {
    const [nodeA, nodeB] = [createScheduler(kv, log), createScheduler(kv, log)];
    let runs = 0;
    const job = async () => ++runs;
    const now = Date.UTC(2030, 0, 1, 10, 5);
    expect(await Promise.all([nodeA.runOnce('purge', HOUR, job, now), nodeB.runOnce('purge', HOUR, job, now + 60_000)])).toEqual([true, false]);
    expect(runs).toBe(1);
    expect(await nodeB.runOnce('purge', HOUR, job, now + HOUR)).toBe(true);
    expect(runs).toBe(2);
  });

  it('a failing job is logged and does not throw', async () => {
    const scheduler = createScheduler(kv, log);
    await expect(scheduler.runOnce('broken', HOUR, async () => { throw new Error('boom'); }, Date.UTC(2030, 0, 2))).resolves.toBe(false);
  });
});
