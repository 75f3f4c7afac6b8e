import type { Kysely } from 'kysely';
import type { Clock } from '../../platform/clock.js';
import type { Schema } from '../../platform/db/schema/index.js';

/** What users consented to, per third-party client (table oauth_consents). */
export function createConsentsRepo(db: Kysely<Schema>, clock: Clock) {
  return {
    async scopesOf(userId: string, clientId: string): Promise<string[] | undefined> {
      const row = await db
        .selectFrom('oauth_consents')
        .select('scopes')
        .where('user_id', '=', userId)
        .where('client_id', '=', clientId)
        .executeTakeFirst();
      return row?.scopes;
    },

    /** Adds scopes to the user's consent for the client (a later, wider request asks only for the rest). */
    async add(userId: string, clientId: string, scopes: string[], trx: Kysely<Schema>): Promise<string[]> {
      const existing = await trx
        .selectFrom('oauth_consents')
        .select('scopes')
        .where('user_id', '=', userId)
        .where('client_id', '=', clientId)
        .forUpdate()
        .executeTakeFirst();
      const merged = [...new Set([...(existing?.scopes ?? []), ...scopes])];
      await trx
        .insertInto('oauth_consents')
        .values({ user_id: userId, client_id: clientId, scopes: merged })
        .onConflict((oc) =>
          oc.columns(['user_id', 'client_id']).doUpdateSet({ scopes: merged, updated_at: clock.now() }),
        )
        .execute();
      return merged;
    },

    ofUser: (userId: string) =>
      db
        .selectFrom('oauth_consents')
        .select(['client_id', 'scopes', 'granted_at', 'updated_at'])
        .where('user_id', '=', userId)
        .orderBy('granted_at')
        .execute(),

    async remove(userId: string, clientId: string, trx: Kysely<Schema>): Promise<string[] | undefined> {
      const row = await trx
        .deleteFrom('oauth_consents')
        .where('user_id', '=', userId)
        .where('client_id', '=', clientId)
        .returning('scopes')
        .executeTakeFirst();
      return row?.scopes;
    },
  };
}
