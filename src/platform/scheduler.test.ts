import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestClock } from '../../test/clock.js';
import { openTestDatabase, usesPostgres } from '../../test/helpers.js';
import { openDatabase, type Database } from './db/database.js';
import { createScheduler, type JobDefinition } from './scheduler.js';

const HOUR = 3600_000;
const log = pino({ level: 'silent' });

/**
 * Two nodes on one database, each with its own scheduler, clock and (on PostgreSQL) connection pool: a
 * job runs once per period however the nodes' ticks and "run now"s interleave.
 */
describe('scheduled jobs across two nodes', () => {
  const databases: Database[] = [];
  beforeAll(async () => {
    let url = '';
    databases.push(await openTestDatabase({ viaUrl: (same) => (url = same) }));
    // The second node: its own pool on the same PostgreSQL database (embedded: one process, one database).
    databases.push(usesPostgres ? await openDatabase({ kind: 'postgres', url, poolSize: 2 }) : databases[0]!);
  });
  afterAll(async () => {
    if (databases[1] !== databases[0]) await databases[1]?.close();
    await databases[0]?.close();
  });

  function twoNodes(job: JobDefinition) {
    const start = new Date(Date.UTC(2030, 0, 1, 10, 0));
    return databases.map((database) => {
      const clock = createTestClock();
      clock.freeze(start);
      const scheduler = createScheduler({ db: database.db, clock, log });
      scheduler.define(job);
      return { clock, scheduler };
    });
  }

  it('runs a job once per period, on whichever node claims it first', async () => {
    let runs = 0;
    const [a, b] = twoNodes({
      name: 'count-once',
      description: 'counts',
      intervalMs: HOUR,
      run: async () => ({ run: ++runs }),
    });
    // Registered at 10:00, first due at 11:00.
    expect(await Promise.all([a!.scheduler.tick(), b!.scheduler.tick()])).toEqual([[], []]);
    for (const node of [a!, b!]) node.clock.advance(HOUR);
    const ticks = await Promise.all([
      a!.scheduler.tick(),
      b!.scheduler.tick(),
      a!.scheduler.tick(),
      b!.scheduler.tick(),
    ]);
    expect(ticks.flat()).toEqual(['count-once']);
    expect(runs).toBe(1);
    // Later in the same period: nothing; the next period: once again, on either node.
    for (const node of [a!, b!]) node.clock.advance(HOUR / 2);
    expect([...(await a!.scheduler.tick()), ...(await b!.scheduler.tick())]).toEqual([]);
    for (const node of [a!, b!]) node.clock.advance(HOUR / 2);
    expect([...(await b!.scheduler.tick()), ...(await a!.scheduler.tick())]).toEqual(['count-once']);
    expect(runs).toBe(2);

    const [status] = await a!.scheduler.list();
    expect(status).toMatchObject({
      name: 'count-once',
      runs: 2,
      failures: 0,
      running: false,
      last_outcome: 'succeeded',
      last_result: { run: 2 },
      last_error: null,
      interval_seconds: 3600,
    });
    expect(status!.next_run_at).toEqual(new Date(Date.UTC(2030, 0, 1, 13, 0)));
  });

  it('runs a job now on one node at a time, and records a failure', async () => {
    let release: () => void = () => undefined;
    let calls = 0;
    const [a, b] = twoNodes({
      name: 'slow-then-broken',
      description: 'waits for the test, then fails',
      intervalMs: HOUR,
      run: async () => {
        calls++;
        await new Promise<void>((resolve) => (release = resolve));
        throw new Error('disk full');
      },
    });
    // Both nodes at 11:00, when it is due: A's run holds it until 11:05.
    for (const node of [a!, b!]) node.clock.advance(HOUR);
    const first = a!.scheduler.runNow('slow-then-broken');
    await expect.poll(() => calls).toBe(1);
    // Held by node A's run: node B's "run now" and periodic tick (even when due) leave it alone.
    expect(await b!.scheduler.runNow('slow-then-broken')).toBe('running');
    expect(await b!.scheduler.tick()).toEqual([]);
    expect((await b!.scheduler.list())[0]).toMatchObject({ running: true });
    release();
    expect(await first).toMatchObject({
      name: 'slow-then-broken',
      running: false,
      last_outcome: 'failed',
      last_result: null,
      last_error: 'disk full',
      runs: 1,
      failures: 1,
    });
    expect(await a!.scheduler.runNow('no-such-job')).toBe('unknown');
  });

  it('takes over a job whose node died mid-run once its hold lapses', async () => {
    let runs = 0;
    const job = { name: 'orphaned', description: 'counts', intervalMs: HOUR, run: async () => ++runs };
    const [a, b] = twoNodes(job);
    await a!.scheduler.list();
    // Node A claimed it and died: its hold is in the row, nobody renews it.
    await databases[0]!.db
      .updateTable('scheduled_jobs')
      .set({ locked_until: new Date(Date.UTC(2030, 0, 1, 10, 5)), locked_by: '00000000-0000-4000-8000-000000000000' })
      .where('name', '=', 'orphaned')
      .execute();
    expect(await b!.scheduler.runNow('orphaned')).toBe('running');
    b!.clock.advance(5 * 60_000);
    expect(await b!.scheduler.runNow('orphaned')).toMatchObject({ runs: 1, last_outcome: 'succeeded', last_result: 1 });
  });
});
