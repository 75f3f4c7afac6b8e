import { createHash, generateKeyPairSync, type JsonWebKey } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Schema } from '../../platform/db/schema/index.js';
import type { SecretBox } from '../../platform/secret-box.js';

export const SIGNING_ALGORITHM = 'RS256';

/** RFC 7638 thumbprint of an RSA public key: a stable key id. */
function thumbprint(jwk: JsonWebKey): string {
  return createHash('sha256').update(JSON.stringify({ e: jwk.e, kty: jwk.kty, n: jwk.n })).digest('base64url');
}

/**
 * The provider's signing keys, newest first: the first signs, all are published in the JWKS so tokens
 * signed before a rotation still verify. The first start makes one (under a lock, so two nodes starting
 * together make one between them); private keys are stored sealed with the secret box.
 */
export async function signingKeys(db: Kysely<Schema>, secretBox: SecretBox): Promise<JsonWebKey[]> {
  const load = async (executor: Kysely<Schema>) =>
    (await executor.selectFrom('oauth_signing_keys').select(['kid', 'private_jwk_sealed']).where('retired_at', 'is', null).orderBy('created_at', 'desc').execute())
      .map((row) => ({ ...(JSON.parse(secretBox.open(row.private_jwk_sealed)) as JsonWebKey), kid: row.kid, alg: SIGNING_ALGORITHM, use: 'sig' }));
  const keys = await load(db);
  if (keys.length) return keys;
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtext('oauth_signing_keys'))`.execute(trx);
    const existing = await load(trx);
    if (existing.length) return existing;
    const jwk = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
    const kid = thumbprint(jwk);
    await trx.insertInto('oauth_signing_keys').values({ kid, algorithm: SIGNING_ALGORITHM, private_jwk_sealed: secretBox.seal(JSON.stringify(jwk)) }).execute();
    return [{ ...jwk, kid, alg: SIGNING_ALGORITHM, use: 'sig' }];
  });
}
