import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Config } from '../../config.js';
import type { Clock } from '../clock.js';
import { defineErrors } from '../http/errors.js';
import { isUuid } from '../http/schemas.js';
import type { DurableStore } from '../kv/index.js';
import { sameSecret } from './tokens.js';

/**
 * X-ID-App-Assertion: how an internal app (id, backend, policies) acts for an end user without a user
 * token (the OAuth authorize handoff, audit ingestion). Format and rules are the interface spec's:
 * `<app_id>.<subject_uuid>.<issued_at_unix>.<nonce>.<hmac_b64url>`, HMAC-SHA256 with the app's secret over
 * `<app_id>|<subject>|<issued_at>|<nonce>`, the subject in canonical lower case.
 */
export const INTERNAL_APPS = ['id', 'backend', 'policies'] as const;
export type InternalApp = (typeof INTERNAL_APPS)[number];

/**
 * How far in the future `issued_at` may lie: the minting app's clock may run a little ahead of ours.
 * Kept small so an assertion cannot be minted to stay valid for long.
 */
export const ASSERTION_CLOCK_SKEW_SECS = 5;

const ISSUED_AT = /^\d{1,12}$/;
const NONCE = /^idaa_[A-Za-z0-9_-]{1,200}$/;
const SIGNATURE = /^[A-Za-z0-9_-]{43}$/;

export const AppAssertionErrors = defineErrors('app_assertion', {
  malformed: [401, 'X-ID-App-Assertion is malformed'],
  unknown_app: [401, 'X-ID-App-Assertion names an app that is not configured'],
  bad_signature: [401, 'X-ID-App-Assertion has an invalid signature'],
  expired: [401, 'X-ID-App-Assertion has expired'],
  not_yet_valid: [401, 'X-ID-App-Assertion is issued in the future'],
  replayed: [401, 'X-ID-App-Assertion has already been used'],
});

export interface AppAssertion {
  app: InternalApp;
  /** The end user the app acts for, canonical lower-case UUID. */
  subject: string;
  issuedAt: Date;
}

export interface AppAssertionVerifier {
  /** Checks the five rules in order and claims the nonce; throws an `app_assertion.*` error (401). */
  verify(header: string): Promise<AppAssertion>;
}

export function createAppAssertionVerifier(deps: {
  secrets: Config['internalAppSecrets'];
  ttlSecs: number;
  /** Where claimed nonces are kept: they must outlive a restart for as long as their assertion passes (Redis, or the database). */
  nonces: Pick<DurableStore, 'setIfAbsent'>;
  clock: Clock;
}): AppAssertionVerifier {
  const secretOf = (app: string) =>
    (INTERNAL_APPS as readonly string[]).includes(app) ? deps.secrets[app as InternalApp] : undefined;

  return {
    async verify(header) {
      const fields = header.split('.');
      if (fields.length !== 5) throw AppAssertionErrors.malformed();
      const [app, subjectAsSent, issuedAtText, nonce, signature] = fields as [string, string, string, string, string];
      const secret = secretOf(app);
      if (!secret) throw AppAssertionErrors.unknown_app();
      if (!isUuid(subjectAsSent) || !ISSUED_AT.test(issuedAtText) || !NONCE.test(nonce) || !SIGNATURE.test(signature)) {
        throw AppAssertionErrors.malformed();
      }
      const subject = subjectAsSent.toLowerCase();
      const expected = createHmac('sha256', secret).update(`${app}|${subject}|${issuedAtText}|${nonce}`).digest();
      if (!timingSafeEqual(Buffer.from(signature, 'base64url'), expected)) throw AppAssertionErrors.bad_signature();

      const issuedAt = Number(issuedAtText);
      const nowSecs = Math.floor(deps.clock.now().getTime() / 1000);
      if (issuedAt > nowSecs + ASSERTION_CLOCK_SKEW_SECS) throw AppAssertionErrors.not_yet_valid();
      if (issuedAt < nowSecs - deps.ttlSecs) throw AppAssertionErrors.expired();

      // Claimed only once everything else holds, so a forged or stale assertion cannot burn a nonce. The
      // claim outlives the window in which the assertion could still pass the time checks.
      const claimSecs = issuedAt + deps.ttlSecs + ASSERTION_CLOCK_SKEW_SECS - nowSecs + 1;
      if (!(await deps.nonces.setIfAbsent(`app-assertion:nonce:${app}:${nonce}`, '1', Math.max(1, claimSecs)))) {
        throw AppAssertionErrors.replayed();
      }
      return { app: app as InternalApp, subject, issuedAt: new Date(issuedAt * 1000) };
    },
  };
}

/**
 * The internal app whose secret the `X-ID-App-Key` header carries, or null. Every configured secret
 * is compared (in constant time), so the answer takes as long whichever app matches, or none.
 */
export function internalAppOfKey(
  header: string | undefined,
  secrets: Config['internalAppSecrets'],
): InternalApp | null {
  if (!header) return null;
  let found: InternalApp | null = null;
  for (const app of INTERNAL_APPS) {
    const secret = secrets[app];
    if (secret && sameSecret(header, secret)) found = app;
  }
  return found;
}
