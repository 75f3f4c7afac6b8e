import type { FastifyBaseLogger } from 'fastify';

/** How often a failure that recurs on every request (the shared store down) is logged. */
export const RECURRING_FAILURE_LOG_MS = 10_000;

/**
 * A logger for a failure that recurs on every request while it lasts: one line per interval, saying
 * how many were left out since the previous one, instead of a line per request.
 */
export function logAtMostEvery(intervalMs = RECURRING_FAILURE_LOG_MS) {
  let last = -Infinity;
  let skipped = 0;
  return (log: FastifyBaseLogger, level: 'warn' | 'error', details: object, message: string): void => {
    const now = Date.now();
    if (now - last < intervalMs) {
      skipped++;
      return;
    }
    last = now;
    log[level]({ ...details, ...(skipped > 0 && { repeated: skipped }) }, message);
    skipped = 0;
  };
}
