import { availableParallelism } from 'node:os';
import { hash, verify, type Options } from '@node-rs/argon2';
import pLimit from 'p-limit';

// Argon2id with 19 MiB, 2 iterations, 1 lane, as docs/access.md states. @node-rs/argon2 (RustCrypto's argon2)
// computes the same hashes as the reference C code in about half the CPU time (docs/benchmarks.md, bench:login).
// The algorithm is spelled as its number: the package declares it as an ambient const enum.
const ARGON2ID = 2 as NonNullable<Options['algorithm']>;
const OPTIONS: Options = { algorithm: ARGON2ID, memoryCost: 19_456, timeCost: 2, parallelism: 1 };

// One hash per core at a time: more hashes in flight than cores only share the cores and evict each
// other's 19 MiB from the caches, costing CPU per hash. They run on libuv's pool (UV_THREADPOOL_SIZE, 4
// unless set), which also serves file, DNS and zlib work, so one thread of it is always left to those.
const THREAD_POOL_SIZE = Number(process.env.UV_THREADPOOL_SIZE) || 4;
const oneHashPerCore = pLimit(Math.max(1, Math.min(availableParallelism(), THREAD_POOL_SIZE - 1)));

// Verified against when an account does not exist, so both paths take the same time.
const DUMMY_HASH = oneHashPerCore(() => hash('waygate-no-such-account', OPTIONS));

export function hashPassword(password: string): Promise<string> {
  return oneHashPerCore(() => hash(password, OPTIONS));
}

/** Verifies a password; with no stored hash it still spends the same time and answers false. */
export async function verifyPassword(stored: string | null, password: string): Promise<boolean> {
  try {
    if (stored === null) {
      const dummy = await DUMMY_HASH;
      await oneHashPerCore(() => verify(dummy, password));
      return false;
    }
    return await oneHashPerCore(() => verify(stored, password));
  } catch {
    return false;
  }
}
