import type { FastifyBaseLogger } from 'fastify';
import type { KeyValueStore } from './kv/index.js';

/**
 * Periodic jobs that run once per interval across all nodes: each tick, the
 * node that first claims the interval's slot in the shared key-value store
 * runs the job; the others skip it. (In-process store: one node, always runs.)
 */
export function createScheduler(kv: KeyValueStore, log: FastifyBaseLogger) {
  const timers: NodeJS.Timeout[] = [];

  async function runOnce(name: string, intervalMs: number, job: () => Promise<unknown>, now = Date.now()): Promise<boolean> {
    const slot = Math.floor(now / intervalMs);
    try {
      if (!(await kv.setIfAbsent(`jobs:${name}:${slot}`, '1', Math.ceil(intervalMs / 1000) * 2))) return false;
      const outcome = await job();
      log.info({ job: name, outcome }, 'scheduled job done');
      return true;
    } catch (err) {
      log.error({ err, job: name }, 'scheduled job failed');
      return false;
    }
  }

  return {
    runOnce,
    every(name: string, intervalMs: number, job: () => Promise<unknown>): void {
      timers.push(setInterval(() => void runOnce(name, intervalMs, job), intervalMs).unref());
    },
    stop(): void {
      for (const timer of timers) clearInterval(timer);
      timers.length = 0;
    },
  };
}

export type Scheduler = ReturnType<typeof createScheduler>;
