import { randomInt } from 'node:crypto';
import { hashToken } from '../../platform/auth/tokens.js';

export const BACKUP_CODE_COUNT = 8;
/** The low-codes reminder goes out when a sign-in leaves this many or fewer. */
export const LOW_BACKUP_CODES = 3;

// Crockford base32: no i, l, o, u, so a code read off paper is typed back unambiguously.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/**
 * A backup code: 16 characters of 5 random bits (80 bits), shown as `xxxx-xxxx-xxxx-xxxx`.
 * 80 bits make a plain SHA-256 of the code as safe to store as a token hash.
 */
export function newBackupCode(): string {
  const chars = Array.from({ length: 16 }, () => ALPHABET[randomInt(ALPHABET.length)]!);
  return [0, 4, 8, 12].map((at) => chars.slice(at, at + 4).join('')).join('-');
}

/** What is hashed: case, dashes and spaces ignored; o read as 0, i and l as 1 (Crockford). */
export function normaliseBackupCode(code: string): string {
  return code.toLowerCase().replace(/[\s-]/g, '').replace(/o/g, '0').replace(/[il]/g, '1');
}

export const hashBackupCode = (code: string) => hashToken(normaliseBackupCode(code));
