import { createHash } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { PasswordErrors } from './errors.js';

/** How long the range service has to answer before the password is accepted unchecked. */
export const BREACH_CHECK_TIMEOUT_MS = 1000;

export interface BreachedPasswordsOptions {
  /** PWNED_PASSWORDS_URL: the base before `/range/{prefix}`; unset, nothing is checked. */
  url: string | undefined;
  /** PWNED_PASSWORDS_MIN_COUNT: how many sightings in breaches refuse a password. */
  minCount: number;
  log: FastifyBaseLogger;
  timeoutMs?: number;
}

/**
 * Refuses passwords known from data breaches, by the k-anonymity range protocol of Pwned Passwords: only
 * the first five hex characters of the password's SHA-1 leave this process; the service answers every
 * suffix it knows under that prefix (`SUFFIX:COUNT` lines, padded with count-0 decoys because we ask
 * `Add-Padding: true`, so not even the size of the answer tells the prefix), and the rest is compared here.
 *
 * Fail-open: when the service does not answer within a second (or answers garbage), the password is
 * accepted. A third-party outage must not stop sign-ups and resets; the password still meets the length
 * rule, and the check is a second line of defence. The failure is logged once per outage, not per request.
 */
export function createBreachedPasswordCheck(options: BreachedPasswordsOptions) {
  const { url, minCount, log, timeoutMs = BREACH_CHECK_TIMEOUT_MS } = options;
  let failing = false;

  async function timesSeen(password: string): Promise<number | undefined> {
    const digest = createHash('sha1').update(password, 'utf8').digest('hex').toUpperCase();
    const prefix = digest.slice(0, 5);
    const suffix = digest.slice(5);
    try {
      const response = await fetch(`${url}/range/${prefix}`, {
        headers: { 'Add-Padding': 'true', 'User-Agent': 'waygate' },
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (!response.ok) throw new Error(`range service answered ${response.status}`);
      const body = await response.text();
      if (failing) log.info('breached-password check answers again');
      failing = false;
      for (const line of body.split('\n')) {
        const [candidate, count] = line.trim().split(':');
        if (candidate?.toUpperCase() === suffix) return Number(count) || 0;
      }
      return 0;
    } catch (err) {
      if (!failing)
        log.warn({ err }, 'breached-password check unavailable; accepting passwords unchecked until it answers');
      failing = true;
      return undefined;
    }
  }

  return {
    enabled: Boolean(url),

    /** 400 `password.breached` when `password` was seen in breaches at least `minCount` times; `field` names it. */
    async assertNotBreached(field: string, password: string): Promise<void> {
      if (!url) return;
      const seen = await timesSeen(password);
      // Padding lines carry count 0: never a sighting, whatever their suffix.
      if (seen !== undefined && seen > 0 && seen >= minCount) {
        throw PasswordErrors.breached(
          `${field} appears in known data breaches (Pwned Passwords); choose another password`,
        );
      }
    },
  };
}

export type BreachedPasswordCheck = ReturnType<typeof createBreachedPasswordCheck>;
