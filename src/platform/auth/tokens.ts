import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

export const SESSION_TOKEN_PREFIX = 'ses_';
export const API_KEY_PREFIX = 'wg_';

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

/** What a key is shown as after creation: enough to recognise it, far too little to use it. */
export function displayPrefix(key: string): string {
  return key.slice(0, API_KEY_PREFIX.length + 8);
}
