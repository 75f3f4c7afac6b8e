import { createHash, generateKeyPairSync, type JsonWebKey } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Clock } from '../../platform/clock.js';
import type { Schema } from '../../platform/db/schema/index.js';
import type { SecretBox } from '../../platform/secret-box.js';

export const SIGNING_ALGORITHM = 'RS256';
/**
 * A new key is published at once but signs only this much later, by when every node has reloaded its
 * keys (each checks once a minute) and relying parties that cache the JWKS briefly have seen it.
 */
export const KEY_PUBLISH_AHEAD_MS = 10 * 60_000;
/** A replaced key stays published this long after its successor started signing: longer than any ID token lives. */
export const KEY_RETIRE_AFTER_MS = 2 * 3600_000;

/** RFC 7638 thumbprint of an RSA public key: a stable key id. */
function thumbprint(jwk: JsonWebKey): string {
  return createHash('sha256')
    .update(JSON.stringify({ e: jwk.e, kty: jwk.kty, n: jwk.n }))
    .digest('base64url');
}

const liveRows = (db: Kysely<Schema>) =>
  db
    .selectFrom('oauth_signing_keys')
    .select(['kid', 'created_at', 'private_jwk_sealed'])
    .where('retired_at', 'is', null)
    .orderBy('created_at', 'desc')
    .execute();

/** The signing key: the newest one published for long enough, or the oldest while none is (a first start). */
function signingKid(rows: { kid: string; created_at: Date }[], nowMs: number): string | undefined {
  return (rows.find((row) => row.created_at.getTime() <= nowMs - KEY_PUBLISH_AHEAD_MS) ?? rows.at(-1))?.kid;
}

/** What the provider was built with: a change (a rotation, a retirement, a key starting to sign) rebuilds it. */
export async function keySetVersion(db: Kysely<Schema>, clock: Clock): Promise<string> {
  const rows = await db
    .selectFrom('oauth_signing_keys')
    .select(['kid', 'created_at'])
    .where('retired_at', 'is', null)
    .orderBy('created_at', 'desc')
    .execute();
  return `${signingKid(rows, clock.nowMs())}|${rows.map((row) => row.kid).join(',')}`;
}

async function insertKey(trx: Kysely<Schema>, secretBox: SecretBox, clock: Clock): Promise<string> {
  const jwk = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
  const kid = thumbprint(jwk);
  await trx
    .insertInto('oauth_signing_keys')
    .values({
      kid,
      algorithm: SIGNING_ALGORITHM,
      private_jwk_sealed: secretBox.seal(JSON.stringify(jwk)),
      created_at: clock.now(),
    })
    .execute();
  return kid;
}

const lock = (trx: Kysely<Schema>) => sql`select pg_advisory_xact_lock(hashtext('oauth_signing_keys'))`.execute(trx);

/**
 * The provider's published keys, the signing key first (oidc-provider signs with the first key of the
 * algorithm); all are in the JWKS so tokens signed before a rotation still verify. The first start makes
 * one (under a lock, so two nodes starting together make one between them); private keys are stored
 * sealed with the secret box.
 */
export async function signingKeys(db: Kysely<Schema>, secretBox: SecretBox, clock: Clock): Promise<JsonWebKey[]> {
  let rows = await liveRows(db);
  if (!rows.length) {
    rows = await db.transaction().execute(async (trx) => {
      await lock(trx);
      if (!(await liveRows(trx)).length) await insertKey(trx, secretBox, clock);
      return liveRows(trx);
    });
  }
  const signing = signingKid(rows, clock.nowMs());
  return [...rows]
    .sort((a, b) => Number(b.kid === signing) - Number(a.kid === signing))
    .map((row) => ({
      ...(JSON.parse(secretBox.open(row.private_jwk_sealed)) as JsonWebKey),
      kid: row.kid,
      alg: SIGNING_ALGORITHM,
      use: 'sig',
    }));
}

/** Adds a key that signs from KEY_PUBLISH_AHEAD_MS on; the older keys stay published until retired. */
export async function rotateSigningKey(
  db: Kysely<Schema>,
  secretBox: SecretBox,
  clock: Clock,
): Promise<{ kid: string; signs_from: Date }> {
  const kid = await db.transaction().execute(async (trx) => {
    await lock(trx);
    return insertKey(trx, secretBox, clock);
  });
  return { kid, signs_from: new Date(clock.nowMs() + KEY_PUBLISH_AHEAD_MS) };
}

/**
 * `waygate secrets reset`: every key goes (their private parts are sealed with a lost key); the next start
 * makes a new one as a first start does. Returns how many went.
 */
export async function forgetSigningKeys(trx: Kysely<Schema>): Promise<number> {
  const result = await trx.deleteFrom('oauth_signing_keys').executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Hourly: keys replaced by a successor that has been signing for KEY_RETIRE_AFTER_MS leave the JWKS. */
export async function retireSupersededKeys(db: Kysely<Schema>, clock: Clock): Promise<number> {
  const cutoff = new Date(clock.nowMs() - KEY_PUBLISH_AHEAD_MS - KEY_RETIRE_AFTER_MS);
  const newest = await db
    .selectFrom('oauth_signing_keys')
    .select('created_at')
    .where('retired_at', 'is', null)
    .where('created_at', '<=', cutoff)
    .orderBy('created_at', 'desc')
    .executeTakeFirst();
  if (!newest) return 0;
  const retired = await db
    .updateTable('oauth_signing_keys')
    .set({ retired_at: clock.now() })
    .where('retired_at', 'is', null)
    .where('created_at', '<', newest.created_at)
    .executeTakeFirst();
  return Number(retired.numUpdatedRows);
}
