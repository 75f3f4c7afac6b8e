/**
 * The service's one source of "now". Services take a Clock instead of calling `new Date()` or
 * `Date.now()`, so tests can move time (token expiry, lockouts, grace periods) without waiting.
 * Rules evaluated by the database compare against a `now` passed in from here, never SQL `now()`.
 */
export interface Clock {
  now(): Date;
  /** The same instant in milliseconds, for hot paths that need no Date. */
  nowMs(): number;
}

export const systemClock: Clock = { now: () => new Date(), nowMs: Date.now };
