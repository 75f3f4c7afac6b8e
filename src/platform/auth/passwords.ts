import argon2 from 'argon2';

// OWASP's baseline for Argon2id: 19 MiB, 2 iterations, 1 lane.
const OPTIONS = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

// Verified against when an account does not exist, so both paths take the same time.
const DUMMY_HASH = argon2.hash('waygate-no-such-account', OPTIONS);

export function hashPassword(password: string): Promise<string> {
  return argon2.hash(password, OPTIONS);
}

/** Verifies a password; with no stored hash it still spends the same time and answers false. */
export async function verifyPassword(hash: string | null, password: string): Promise<boolean> {
  try {
    if (hash === null) {
      await argon2.verify(await DUMMY_HASH, password);
      return false;
    }
    return await argon2.verify(hash, password);
  } catch {
    return false;
  }
}
