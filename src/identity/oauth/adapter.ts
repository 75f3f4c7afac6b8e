import type { Insertable, Kysely } from 'kysely';
import type { Adapter, AdapterPayload } from 'oidc-provider';
import { hashToken } from '../../platform/auth/tokens.js';
import type { Clock } from '../../platform/clock.js';
import { classifyDatabaseError } from '../../platform/db/errors.js';
import { createGroupCommit } from '../../platform/db/group-commit.js';
import type { Schema } from '../../platform/db/schema/index.js';

/**
 * Called with the ids (token hashes) of access tokens that were just revoked, so the credential cache
 * forgets them on every node.
 */
export type AccessTokensRevoked = (tokenHashes: string[]) => Promise<void>;

/**
 * The provider's session id is its cookie's value, which is signed: it may stay in the payload, where
 * `findByUid` needs it. Every other artifact's id is a bearer secret (a token, a code).
 */
const KEEPS_ID_IN_PAYLOAD = new Set(['Session']);

type ArtifactRow = Insertable<Schema['oauth_artifacts']>;
/** An artifact to store (insert or replace), or a code or refresh token to mark used if nothing did yet. */
type ArtifactWrite = { save: ArtifactRow } | { consume: { model: string; id: string } };

/** Far more than 20 connections make at once; 10 parameters a row stays far below PostgreSQL's 65,535. */
const MAX_BATCH = 500;

/**
 * Writes artifacts by group commit (`createGroupCommit`): the saves and consumptions of the grants that
 * arrive while one batch commits go to the database together, in one transaction, and each resolves only
 * once its batch is committed, so a token answered is a token stored. A consumption resolves to whether
 * it was the one that used the artifact (of two racing for one, exactly one is). A batch that fails (say,
 * two saves of one artifact) is committed again one write at a time.
 */
export function createArtifactWriter(db: Kysely<Schema>, clock: Clock) {
  const keyOf = (artifact: { model: string; id: string }) => `${artifact.model} ${artifact.id}`;
  const saving = (executor: Kysely<Schema>, rows: ArtifactRow[]) =>
    executor
      .insertInto('oauth_artifacts')
      .values(rows)
      .onConflict((oc) =>
        oc.columns(['model', 'id']).doUpdateSet((eb) => ({
          payload: eb.ref('excluded.payload'),
          grant_id: eb.ref('excluded.grant_id'),
          uid: eb.ref('excluded.uid'),
          user_code: eb.ref('excluded.user_code'),
          account_id: eb.ref('excluded.account_id'),
          client_id: eb.ref('excluded.client_id'),
          expires_at: eb.ref('excluded.expires_at'),
        })),
      )
      .execute();
  const consuming = (executor: Kysely<Schema>, artifacts: { model: string; id: string }[]) =>
    executor
      .updateTable('oauth_artifacts')
      .set({ consumed_at: clock.now() })
      .where((eb) =>
        eb.or(artifacts.map((artifact) => eb.and([eb('model', '=', artifact.model), eb('id', '=', artifact.id)]))),
      )
      .where('consumed_at', 'is', null)
      .returning(['model', 'id'])
      .execute();

  /** The artifacts this batch consumed: one statement for the saves and one for the consumptions, committed together. */
  async function run(
    rows: ArtifactRow[],
    artifacts: { model: string; id: string }[],
  ): Promise<{ model: string; id: string }[]> {
    if (!artifacts.length) return (await saving(db, rows), []);
    if (!rows.length) return consuming(db, artifacts);
    return db.transaction().execute(async (trx) => (await saving(trx, rows), consuming(trx, artifacts)));
  }

  return createGroupCommit<ArtifactWrite, boolean>({
    async commit(writes) {
      const rows = writes.flatMap((write) => ('save' in write ? [write.save] : []));
      const artifacts = writes.flatMap((write) => ('consume' in write ? [write.consume] : []));
      const consumed = new Set((await run(rows, artifacts)).map(keyOf));
      // A consumption named twice in the batch was done once: the first to ask gets it.
      return writes.map((write) => ({ value: 'save' in write || consumed.delete(keyOf(write.consume)) }));
    },
    afterCommit: async () => undefined,
    failsAll: (err) => classifyDatabaseError(err)?.fault === 'unavailable',
    closed: () => new Error('the service is shutting down'),
    maxBatch: MAX_BATCH,
  });
}

export type ArtifactWriter = ReturnType<typeof createArtifactWriter>;

/**
 * oidc-provider's storage on our database: one row per artifact (model, id), with the grant, the user,
 * the client, the interaction uid and the device user code in their own indexed columns for lookups.
 * Ids are stored as their SHA-256 hash (an access token's row id is its credential hash), and never in
 * the payload: a copy of the table holds no usable token. Expired rows are never returned and are
 * removed by the hourly cleanup.
 */
export function artifactAdapter(
  db: Kysely<Schema>,
  writer: ArtifactWriter,
  clock: Clock,
  model: string,
  accessTokensRevoked: AccessTokensRevoked,
): Adapter {
  const live = () =>
    db
      .selectFrom('oauth_artifacts')
      .select(['payload', 'consumed_at'])
      .where('model', '=', model)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', clock.now())]));
  const shown = (
    row: { payload: Record<string, unknown>; consumed_at: Date | null } | undefined,
    id?: string,
  ): AdapterPayload | undefined =>
    row && {
      ...row.payload,
      ...(id ? { jti: id } : {}),
      ...(row.consumed_at ? { consumed: Math.floor(row.consumed_at.getTime() / 1000) } : {}),
    };

  // Every artifact of the grant, whatever its model, and the grant itself: revoking a grant ends its codes
  // and tokens together, and a token a racing request saves afterwards has no grant to stand on.
  async function revokeByGrantId(grantId: string): Promise<void> {
    const deleted = await db
      .deleteFrom('oauth_artifacts')
      .where((eb) =>
        eb.or([eb('grant_id', '=', grantId), eb.and([eb('model', '=', 'Grant'), eb('id', '=', hashToken(grantId))])]),
      )
      .returning(['model', 'id'])
      .execute();
    await accessTokensRevoked(deleted.filter((row) => row.model === 'AccessToken').map((row) => row.id));
  }

  return {
    async upsert(id, payload, expiresIn) {
      const stored = { ...payload };
      if (!KEEPS_ID_IN_PAYLOAD.has(model)) delete stored.jti;
      const row = {
        model,
        id: hashToken(id),
        payload: JSON.stringify(stored),
        grant_id: payload.grantId ?? null,
        uid: payload.uid ?? null,
        user_code: payload.userCode ?? null,
        account_id: payload.accountId ?? null,
        client_id: payload.clientId ?? null,
        expires_at: expiresIn ? new Date(clock.nowMs() + expiresIn * 1000) : null,
      };
      await writer.write({ save: row });
    },
    find: async (id) => shown(await live().where('id', '=', hashToken(id)).executeTakeFirst(), id),
    findByUid: async (uid) => shown(await live().where('uid', '=', uid).executeTakeFirst()),
    findByUserCode: async (userCode) => shown(await live().where('user_code', '=', userCode).executeTakeFirst()),
    // Atomic: of two requests racing with one code or refresh token, only one may use it. The other
    // counts as a reuse, as the provider treats a token seen consumed: the whole grant is revoked.
    async consume(id) {
      if (await writer.write({ consume: { model, id: hashToken(id) } })) return;
      const row = await db
        .selectFrom('oauth_artifacts')
        .select('grant_id')
        .where('model', '=', model)
        .where('id', '=', hashToken(id))
        .executeTakeFirst();
      if (row?.grant_id) await revokeByGrantId(row.grant_id);
      // Already loaded: only the provider, which imports it, calls its adapters.
      const { errors } = await import('oidc-provider');
      throw new errors.InvalidGrant(
        `${model === 'RefreshToken' ? 'refresh token' : 'authorization code'} already used`,
      );
    },
    async destroy(id) {
      const deleted = await db
        .deleteFrom('oauth_artifacts')
        .where('model', '=', model)
        .where('id', '=', hashToken(id))
        .returning('model')
        .executeTakeFirst();
      if (deleted?.model === 'AccessToken') await accessTokensRevoked([hashToken(id)]);
    },
    revokeByGrantId,
  };
}

/**
 * Revokes a user's tokens, codes, grants and provider sessions (of one client, or of all), in one
 * statement; returns the access-token hashes removed and how many tokens went.
 */
export async function revokeArtifactsOf(db: Kysely<Schema>, userId: string, clientId?: string) {
  let query = db.deleteFrom('oauth_artifacts').where('account_id', '=', userId);
  if (clientId) query = query.where('client_id', '=', clientId);
  const deleted = await query.returning(['model', 'id']).execute();
  return {
    accessTokenHashes: deleted.filter((row) => row.model === 'AccessToken').map((row) => row.id),
    tokens: deleted.filter((row) => row.model === 'AccessToken' || row.model === 'RefreshToken').length,
    artifacts: deleted.length,
  };
}

/**
 * What each client holds for a user, for the list of connected apps: the scopes of its live grants and
 * when it last got a token for them (the newest issue time of its access and refresh tokens still
 * stored, used or not), per client id.
 */
export async function holdingsOf(
  db: Kysely<Schema>,
  userId: string,
  clock: Clock,
): Promise<Map<string, { scopes: string[]; lastUsedAt: Date | null }>> {
  const rows = await db
    .selectFrom('oauth_artifacts')
    .select(['model', 'client_id', 'payload'])
    .where('account_id', '=', userId)
    .where('model', 'in', ['Grant', 'AccessToken', 'RefreshToken'])
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', clock.now())]))
    .execute();
  const held = new Map<string, { scopes: Set<string>; lastUsedMs: number | null; granted: boolean }>();
  for (const row of rows) {
    if (!row.client_id) continue;
    const entry = held.get(row.client_id) ?? { scopes: new Set<string>(), lastUsedMs: null, granted: false };
    held.set(row.client_id, entry);
    if (row.model === 'Grant') {
      entry.granted = true;
      const scope = (row.payload.openid as { scope?: unknown } | undefined)?.scope;
      if (typeof scope === 'string') for (const name of scope.split(' ').filter(Boolean)) entry.scopes.add(name);
    } else if (typeof row.payload.iat === 'number') {
      entry.lastUsedMs = Math.max(entry.lastUsedMs ?? 0, row.payload.iat * 1000);
    }
  }
  // Tokens without a live grant stand on nothing (the grant's revocation voids them): not a connection.
  return new Map(
    [...held]
      .filter(([, entry]) => entry.granted)
      .map(([clientId, entry]) => [
        clientId,
        { scopes: [...entry.scopes], lastUsedAt: entry.lastUsedMs === null ? null : new Date(entry.lastUsedMs) },
      ]),
  );
}

/** Revokes every artifact a client holds, for all users (the client was deactivated, deleted or narrowed). */
export async function revokeArtifactsOfClient(db: Kysely<Schema>, clientId: string): Promise<string[]> {
  const deleted = await db
    .deleteFrom('oauth_artifacts')
    .where('client_id', '=', clientId)
    .returning(['model', 'id'])
    .execute();
  return deleted.filter((row) => row.model === 'AccessToken').map((row) => row.id);
}

/** The hashes of a user's live access tokens (to forget them in the credential cache). */
export async function accessTokenHashesOf(db: Kysely<Schema>, userId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('oauth_artifacts')
    .select('id')
    .where('account_id', '=', userId)
    .where('model', '=', 'AccessToken')
    .execute();
  return rows.map((row) => row.id);
}

/** Hourly: artifacts past their expiry. */
export async function purgeExpiredArtifacts(db: Kysely<Schema>, clock: Clock): Promise<number> {
  const result = await db.deleteFrom('oauth_artifacts').where('expires_at', '<=', clock.now()).executeTakeFirst();
  return Number(result.numDeletedRows);
}
