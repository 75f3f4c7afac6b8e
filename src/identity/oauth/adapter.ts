import type { Kysely } from 'kysely';
import type { Adapter, AdapterPayload } from 'oidc-provider';
import type { Clock } from '../../platform/clock.js';
import type { Schema } from '../../platform/db/schema/index.js';

/**
 * oidc-provider's storage on our database: one row per artifact (model, id), with the grant id, the
 * interaction uid and the device user code in their own indexed columns for its lookups. Expired rows
 * are never returned and are removed by the hourly cleanup.
 */
export function artifactAdapter(db: Kysely<Schema>, clock: Clock, model: string): Adapter {
  const live = () =>
    db
      .selectFrom('oauth_artifacts')
      .select(['payload', 'consumed_at'])
      .where('model', '=', model)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', clock.now())]));
  const shown = (row: { payload: Record<string, unknown>; consumed_at: Date | null } | undefined): AdapterPayload | undefined =>
    row && { ...row.payload, ...(row.consumed_at ? { consumed: Math.floor(row.consumed_at.getTime() / 1000) } : {}) };

  return {
    async upsert(id, payload, expiresIn) {
      const row = {
        model,
        id,
        payload: JSON.stringify(payload),
        grant_id: payload.grantId ?? null,
        uid: payload.uid ?? null,
        user_code: payload.userCode ?? null,
        expires_at: expiresIn ? new Date(clock.nowMs() + expiresIn * 1000) : null,
      };
      await db
        .insertInto('oauth_artifacts')
        .values(row)
        .onConflict((oc) => oc.columns(['model', 'id']).doUpdateSet({ payload: row.payload, grant_id: row.grant_id, uid: row.uid, user_code: row.user_code, expires_at: row.expires_at }))
        .execute();
    },
    find: async (id) => shown(await live().where('id', '=', id).executeTakeFirst()),
    findByUid: async (uid) => shown(await live().where('uid', '=', uid).executeTakeFirst()),
    findByUserCode: async (userCode) => shown(await live().where('user_code', '=', userCode).executeTakeFirst()),
    async consume(id) {
      await db.updateTable('oauth_artifacts').set({ consumed_at: clock.now() }).where('model', '=', model).where('id', '=', id).execute();
    },
    async destroy(id) {
      await db.deleteFrom('oauth_artifacts').where('model', '=', model).where('id', '=', id).execute();
    },
    // Every artifact of the grant, whatever its model: revoking a grant ends its codes and tokens together.
    async revokeByGrantId(grantId) {
      await db.deleteFrom('oauth_artifacts').where('grant_id', '=', grantId).execute();
    },
  };
}

/** Hourly: artifacts past their expiry. */
export async function purgeExpiredArtifacts(db: Kysely<Schema>, clock: Clock): Promise<number> {
  const result = await db.deleteFrom('oauth_artifacts').where('expires_at', '<=', clock.now()).executeTakeFirst();
  return Number(result.numDeletedRows);
}

