import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

export const SESSION_TOKEN_PREFIX = 'ses_';
export const API_KEY_PREFIX = 'wg_';
/** OAuth access tokens: opaque, resolved like sessions (the OAuth provider issues them). */
export const OAUTH_ACCESS_TOKEN_PREFIX = 'wgat_';

/** A new secret: the prefix plus 256 random bits, base64url. */
export function newToken(prefix: string): string {
  return prefix + randomBytes(32).toString('base64url');
}

/** Tokens and keys are stored only as this SHA-256 hash (hex). */
export function hashToken(token: string): string {
  // The one-shot form: this runs on every authenticated request.
  return hash('sha256', token, 'hex');
}

/** Constant-time comparison of two hex hashes (or any two strings). */
export function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * Whether two strings are equal, in a time that depends only on their lengths. For values compared
 * on every request, where converting both to buffers for `sameSecret` would cost more than the check.
 */
export function sameTextConstantTime(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}

/** What a key is shown as after creation: enough to recognise it, far too little to use it. */
export function displayPrefix(key: string): string {
  return key.slice(0, API_KEY_PREFIX.length + 8);
}
