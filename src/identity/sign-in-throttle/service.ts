import { createHash } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { defineErrors, tooManyRequests } from '../../platform/http/errors.js';
import type { DurableStore } from '../../platform/kv/index.js';
import type { Clock } from '../../platform/clock.js';

/**
 * Brute-force protection for password sign-in, beyond the request rate limits:
 * failures are counted per identifier (whatever was typed, whether or not an
 * account has it, so a lockout says nothing about existence), per account once
 * the identifier names one (whichever of its identifiers was typed: username
 * and email share one count, and wrong 2FA codes add to it), and per client IP,
 * in a 15-minute window; reaching the limit locks that identifier, account or
 * IP out of sign-in for 15 minutes (429 with Retry-After). A password reset
 * lifts the lock of its account. Counters and locks live in the durable store
 * (Redis, or the database without it), so every node shares them and a
 * restart lifts no lock; when it fails, sign-in is not blocked.
 */
export const SIGN_IN_POLICY = {
  windowSecs: 15 * 60,
  maxFailuresPerIdentifier: 10,
  maxFailuresPerIp: 50,
  lockSecs: 15 * 60,
};

const LOCKED_MESSAGE = 'Too many failed sign-in attempts; try again later';

export const SignInErrors = defineErrors('sign_in', {
  locked_out: [429, LOCKED_MESSAGE],
});

/** What an attempt is counted on: the identifier as typed, and the user it names (absent when it names nobody). */
export interface SignInSubject {
  identifier: string;
  userId?: string;
}

export function createSignInThrottle(kv: DurableStore, log: FastifyBaseLogger, clock: Clock, policy = SIGN_IN_POLICY) {
  // Identifiers are hashed so the store never holds email addresses.
  const identifierKey = (identifier: string) =>
    `signin:id:${createHash('sha256').update(identifier).digest('hex').slice(0, 32)}`;
  const accountKey = (userId: string) => `signin:account:${userId}`;
  // An identifier naming nobody has only its own count, which locks after as many failures as an account's.
  const subjects = ({ identifier, userId }: SignInSubject, ip: string) => [
    { key: identifierKey(identifier), max: policy.maxFailuresPerIdentifier },
    ...(userId ? [{ key: accountKey(userId), max: policy.maxFailuresPerIdentifier }] : []),
    { key: `signin:ip:${ip}`, max: policy.maxFailuresPerIp },
  ];

  async function failOpen<T>(operation: () => Promise<T>, fallback: T): Promise<T> {
    try {
      return await operation();
    } catch (err) {
      log.error({ err }, 'sign-in throttle store unavailable; not throttling');
      return fallback;
    }
  }

  /** Throws 429 while the identifier, its account or the IP is locked out. */
  async function ensureAllowed(subject: SignInSubject, ip: string): Promise<void> {
    const locks = await failOpen(() => Promise.all(subjects(subject, ip).map((s) => kv.get(`${s.key}:lock`))), []);
    const lockedUntilMs = Math.max(0, ...locks.map((until) => Number(until ?? 0)));
    const leftMs = lockedUntilMs - clock.nowMs();
    if (leftMs > 0) throw tooManyRequests(SignInErrors.locked_out, LOCKED_MESSAGE, leftMs / 1000);
  }

  async function lock(key: string): Promise<void> {
    await kv.set(`${key}:lock`, String(clock.nowMs() + policy.lockSecs * 1000), policy.lockSecs);
  }

  return {
    /**
     * Claims one password attempt for the identifier and the IP before the password is checked: the
     * failure counters are incremented first (atomically, on every node), so however many attempts
     * arrive at once, at most the allowed number reach the check; the rest get 429 and lock. Report
     * the outcome: a success takes its count back, a failure that used the last attempt locks.
     */
    async claim(subject: SignInSubject, ip: string): Promise<{ succeeded(): Promise<void>; failed(): Promise<void> }> {
      await ensureAllowed(subject, ip);
      const at = clock.nowMs();
      const claimed = await failOpen(
        () =>
          Promise.all(
            subjects(subject, ip).map(async (one) => ({
              ...one,
              count: (await kv.hitWindow(`${one.key}:failures`, policy.windowSecs, at)).count,
            })),
          ),
        [],
      );
      const over = claimed.filter((one) => one.count > one.max);
      if (over.length) {
        await failOpen(() => Promise.all(over.map((one) => lock(one.key))), []);
        throw tooManyRequests(SignInErrors.locked_out, LOCKED_MESSAGE, policy.lockSecs);
      }
      return {
        succeeded: () =>
          failOpen(
            async () =>
              void (await Promise.all(claimed.map((s) => kv.unhitWindow(`${s.key}:failures`, policy.windowSecs, at)))),
            undefined,
          ),
        failed: () =>
          failOpen(
            async () => void (await Promise.all(claimed.filter((s) => s.count >= s.max).map((s) => lock(s.key)))),
            undefined,
          ),
      };
    },

    ensureAllowed,

    async recordFailure(subject: SignInSubject, ip: string): Promise<void> {
      await failOpen(async () => {
        for (const counted of subjects(subject, ip)) {
          const { count } = await kv.hitWindow(`${counted.key}:failures`, policy.windowSecs, clock.nowMs());
          if (count >= counted.max) await lock(counted.key);
        }
      }, undefined);
    },

    /** Lifts the lock of these identifiers and of the user's account, and forgets their failures (the IP locks stay). */
    async clear(identifiers: string[], userId: string): Promise<void> {
      const keys = [...identifiers.map(identifierKey), accountKey(userId)];
      await failOpen(
        () =>
          Promise.all(
            keys.flatMap((key) => [
              kv.delete(`${key}:lock`),
              kv.resetWindow(`${key}:failures`, policy.windowSecs, clock.nowMs()),
            ]),
          ),
        [],
      );
    },
  };
}

export type SignInThrottle = ReturnType<typeof createSignInThrottle>;
