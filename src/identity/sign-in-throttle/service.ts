import { createHash } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { defineErrors, tooManyRequests } from '../../platform/http/errors.js';
import type { KeyValueStore } from '../../platform/kv/index.js';
import type { Clock } from '../../platform/clock.js';

/**
 * Brute-force protection for password sign-in, beyond the request rate limits:
 * failures are counted per identifier (whatever was typed, whether or not an
 * account has it, so a lockout says nothing about existence) and per client IP
 * in a 15-minute window; reaching the limit locks that identifier or IP out of
 * password sign-in for 15 minutes (429 with Retry-After). A password reset
 * lifts the lock of its account. Counters live in the key-value store, so
 * every node shares them; when it fails, sign-in is not blocked.
 */
export const SIGN_IN_POLICY = { windowSecs: 15 * 60, maxFailuresPerIdentifier: 10, maxFailuresPerIp: 50, lockSecs: 15 * 60 };

const LOCKED_MESSAGE = 'Too many failed sign-in attempts; try again later';

export const SignInErrors = defineErrors('sign_in', {
  locked_out: [429, LOCKED_MESSAGE],
});

export function createSignInThrottle(kv: KeyValueStore, log: FastifyBaseLogger, clock: Clock, policy = SIGN_IN_POLICY) {
  // Identifiers are hashed so the store never holds email addresses.
  const subjects = (identifier: string, ip: string) => [
    { key: `signin:id:${createHash('sha256').update(identifier).digest('hex').slice(0, 32)}`, max: policy.maxFailuresPerIdentifier },
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

  /** Throws 429 while the identifier or the IP is locked out. */
  async function ensureAllowed(identifier: string, ip: string): Promise<void> {
    const locks = await failOpen(() => Promise.all(subjects(identifier, ip).map((s) => kv.get(`${s.key}:lock`))), []);
    const lockedUntilMs = Math.max(0, ...locks.map((lock) => Number(lock ?? 0)));
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
    async claim(identifier: string, ip: string): Promise<{ succeeded(): Promise<void>; failed(): Promise<void> }> {
      await ensureAllowed(identifier, ip);
      const at = clock.nowMs();
      const claimed = await failOpen(
        () => Promise.all(subjects(identifier, ip).map(async (subject) => ({ ...subject, count: (await kv.hitWindow(`${subject.key}:failures`, policy.windowSecs, at)).count }))),
        [],
      );
      const over = claimed.filter((subject) => subject.count > subject.max);
      if (over.length) {
        await failOpen(() => Promise.all(over.map((subject) => lock(subject.key))), []);
        throw tooManyRequests(SignInErrors.locked_out, LOCKED_MESSAGE, policy.lockSecs);
      }
      return {
        succeeded: () => failOpen(async () => void (await Promise.all(claimed.map((s) => kv.unhitWindow(`${s.key}:failures`, policy.windowSecs, at)))), undefined),
        failed: () => failOpen(async () => void (await Promise.all(claimed.filter((s) => s.count >= s.max).map((s) => lock(s.key)))), undefined),
      };
    },

    ensureAllowed,

    async recordFailure(identifier: string, ip: string): Promise<void> {
      await failOpen(async () => {
        for (const subject of subjects(identifier, ip)) {
          const { count } = await kv.hitWindow(`${subject.key}:failures`, policy.windowSecs, clock.nowMs());
          if (count >= subject.max) await lock(subject.key);
        }
      }, undefined);
    },

    /** Lifts the lock of these identifiers and forgets their failures (the IP locks stay). */
    async clear(identifiers: string[]): Promise<void> {
      const keys = identifiers.map((identifier) => subjects(identifier, '')[0]!.key);
      await failOpen(
        () => Promise.all(keys.flatMap((key) => [kv.delete(`${key}:lock`), kv.resetWindow(`${key}:failures`, policy.windowSecs, clock.nowMs())])),
        [],
      );
    },
  };
}

export type SignInThrottle = ReturnType<typeof createSignInThrottle>;
