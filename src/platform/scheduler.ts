import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Clock } from './clock.js';
import type { Schema } from './db/schema/index.js';

/** A periodic job: what it does, and how often (its periods start at multiples of the interval since 1970, UTC). */
export interface JobDefinition {
  name: string;
  description: string;
  intervalMs: number;
  /** Resolves with what it did (counts), shown as the run's result; throws when it failed. */
  run: () => Promise<unknown>;
}

export interface JobStatus {
  name: string;
  description: string;
  interval_seconds: number;
  next_run_at: Date;
  running: boolean;
  last_started_at: Date | null;
  last_finished_at: Date | null;
  last_duration_ms: number | null;
  last_outcome: 'succeeded' | 'failed' | null;
  last_result: unknown;
  last_error: string | null;
  runs: number;
  failures: number;
}

/** A "run now" answer as the CLI gets it (through a running server's socket, or from its own scheduler). */
export function jobRunAnswer(
  status: JobStatus | 'unknown' | 'running',
): { outcome: 'unknown' } | { outcome: 'running' } | { outcome: 'ran'; job: JobStatus } {
  if (status === 'unknown') return { outcome: 'unknown' };
  if (status === 'running') return { outcome: 'running' };
  return { outcome: 'ran', job: status };
}

/** How often each node looks for due jobs. */
const TICK_MS = 60_000;
/** A run holds its job this long, renewed every third of it while it runs; a dead node's hold lapses after it. */
const HOLD_MS = 5 * 60_000;

/**
 * Periodic jobs that run once per period across every node on the database (issue 35): each node looks
 * for due jobs every minute and claims one with a conditional update of its `scheduled_jobs` row (due,
 * and not held by a live run), which only one racing node wins, on PostgreSQL and embedded alike. The
 * winner runs it, records the outcome and moves the row to the next period. An admin's "run now" claims
 * the same row whether due or not, so it too runs on one node at a time.
 */
export function createScheduler(deps: { db: Kysely<Schema>; clock: Clock; log: FastifyBaseLogger }) {
  const { db, clock, log } = deps;
  const jobs = new Map<string, JobDefinition>();
  let registered: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let ticking: Promise<unknown> = Promise.resolve();

  const nextPeriod = (job: JobDefinition, nowMs: number) =>
    new Date((Math.floor(nowMs / job.intervalMs) + 1) * job.intervalMs);

  /** A row per job this node knows (the first node to start makes it), first due at the next period's start. */
  function register(): Promise<void> {
    registered ??= (async () => {
      if (jobs.size === 0) return;
      const now = clock.nowMs();
      const rows = [...jobs.values()].map((job) => ({ name: job.name, next_run_at: nextPeriod(job, now) }));
      await db
        .insertInto('scheduled_jobs')
        .values(rows)
        .onConflict((conflict) => conflict.column('name').doNothing())
        .execute();
    })();
    registered.catch(() => (registered = undefined));
    return registered;
  }

  /** Claims the job for one run: true when this node won it (due, or `anyTime`, and not held by a live run). */
  async function claim(name: string, runId: string, anyTime: boolean): Promise<boolean> {
    const now = clock.now();
    let query = db
      .updateTable('scheduled_jobs')
      .set({ locked_until: new Date(now.getTime() + HOLD_MS), locked_by: runId, last_started_at: now })
      .where('name', '=', name)
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]));
    if (!anyTime) query = query.where('next_run_at', '<=', now);
    return Number((await query.executeTakeFirst()).numUpdatedRows) === 1;
  }

  /** Runs a claimed job, renewing its hold meanwhile, and records how it went. */
  async function runClaimed(job: JobDefinition, runId: string, periodic: boolean): Promise<void> {
    const renew = setInterval(() => {
      db.updateTable('scheduled_jobs')
        .set({ locked_until: new Date(clock.nowMs() + HOLD_MS) })
        .where('name', '=', job.name)
        .where('locked_by', '=', runId)
        .execute()
        .catch((err: unknown) => log.warn({ err, job: job.name }, 'could not renew the hold of a running job'));
    }, HOLD_MS / 3).unref();
    const started = performance.now();
    let outcome: { last_outcome: 'succeeded' | 'failed'; last_result: string | null; last_error: string | null };
    try {
      const result = await job.run();
      outcome = { last_outcome: 'succeeded', last_result: JSON.stringify(result ?? null), last_error: null };
      log.info({ job: job.name, result }, 'scheduled job done');
    } catch (err) {
      outcome = {
        last_outcome: 'failed',
        last_result: null,
        last_error: err instanceof Error ? err.message : String(err),
      };
      log.error({ err, job: job.name }, 'scheduled job failed');
    } finally {
      clearInterval(renew);
    }
    const failed = outcome.last_outcome === 'failed' ? 1 : 0;
    await db
      .updateTable('scheduled_jobs')
      .set((eb) => ({
        ...outcome,
        locked_until: null,
        locked_by: null,
        last_finished_at: clock.now(),
        last_duration_ms: Math.round(performance.now() - started),
        runs: eb('runs', '+', 1),
        failures: eb('failures', '+', failed),
        // A run now leaves the periodic schedule as it was.
        ...(periodic && { next_run_at: nextPeriod(job, clock.nowMs()) }),
      }))
      .where('name', '=', job.name)
      .where('locked_by', '=', runId)
      .execute();
  }

  async function list(): Promise<JobStatus[]> {
    await register();
    const rows = await db
      .selectFrom('scheduled_jobs')
      .selectAll()
      .where('name', 'in', [...jobs.keys()])
      .orderBy('name')
      .execute();
    const now = clock.nowMs();
    return rows.map(({ locked_until, locked_by: _run, ...row }) => {
      const job = jobs.get(row.name)!;
      return {
        ...row,
        description: job.description,
        interval_seconds: job.intervalMs / 1000,
        running: locked_until !== null && locked_until.getTime() > now,
      };
    });
  }

  return {
    define(job: JobDefinition): void {
      if (jobs.has(job.name)) throw new Error(`job ${job.name} is defined twice`);
      jobs.set(job.name, job);
    },

    /** Runs every due job this node wins; resolves with their names (tests tick by hand with a moved clock). */
    async tick(): Promise<string[]> {
      await register();
      const ran: string[] = [];
      for (const job of jobs.values()) {
        const runId = randomUUID();
        if (!(await claim(job.name, runId, false))) continue;
        await runClaimed(job, runId, true);
        ran.push(job.name);
      }
      return ran;
    },

    /** Runs a job now, whether due or not: its status after the run, or why it could not run. */
    async runNow(name: string): Promise<JobStatus | 'unknown' | 'running'> {
      const job = jobs.get(name);
      if (!job) return 'unknown';
      await register();
      const runId = randomUUID();
      if (!(await claim(name, runId, true))) return 'running';
      await runClaimed(job, runId, false);
      return (await list()).find((status) => status.name === name)!;
    },

    list,

    /** Looks for due jobs every minute until stopped; a failed look is logged and tried again next minute. */
    start(): void {
      timer ??= setInterval(() => {
        ticking = this.tick().catch((err: unknown) => log.error({ err }, 'could not look for due jobs'));
      }, TICK_MS).unref();
    },

    /** Stops looking, and waits for a run in progress to finish (and record itself) before the database closes. */
    async stop(): Promise<void> {
      clearInterval(timer);
      timer = undefined;
      await ticking;
    },
  };
}

export type Scheduler = ReturnType<typeof createScheduler>;
