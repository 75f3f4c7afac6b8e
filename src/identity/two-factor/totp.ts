import { Secret, TOTP } from 'otpauth';

/** RFC 6238 as authenticator apps expect it: HMAC-SHA-1, 30-second steps, 6 digits. */
export const TOTP_PERIOD_SECONDS = 30;
export const TOTP_DIGITS = 6;
const ISSUER = 'Waygate';

/** A new random secret (160 bits, the HMAC-SHA-1 block size RFC 4226 recommends), base32. */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

/** The code for `timestampMs`; `digits` is a parameter so the RFC's 8-digit test vectors can be checked. */
export function totpCode(secretBase32: string, timestampMs: number, digits: number = TOTP_DIGITS): string {
  return TOTP.generate({
    secret: Secret.fromBase32(secretBase32),
    algorithm: 'SHA1',
    digits,
    period: TOTP_PERIOD_SECONDS,
    timestamp: timestampMs,
  });
}

/**
 * The time step whose code `code` is, within one step either side of `timestampMs`
 * (clock drift), or null. Callers refuse a step at or before the last one accepted.
 */
export function totpStepOf(secretBase32: string, code: string, timestampMs: number): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  const delta = TOTP.validate({
    token: code,
    secret: Secret.fromBase32(secretBase32),
    algorithm: 'SHA1',
    digits: TOTP_DIGITS,
    period: TOTP_PERIOD_SECONDS,
    timestamp: timestampMs,
    window: 1,
  });
  return delta === null ? null : TOTP.counter({ period: TOTP_PERIOD_SECONDS, timestamp: timestampMs }) + delta;
}

/** The otpauth:// URL an authenticator app scans. */
export function totpUrl(secretBase32: string, username: string): string {
  return new TOTP({
    issuer: ISSUER,
    label: username,
    secret: Secret.fromBase32(secretBase32),
    algorithm: 'SHA1',
    digits: TOTP_DIGITS,
    period: TOTP_PERIOD_SECONDS,
  }).toString();
}
