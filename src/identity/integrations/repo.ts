import type { Kysely, Selectable, Updateable } from 'kysely';
import type { Schema } from '../../platform/db/schema/index.js';
import type { IntegrationBotStatus, IntegrationsTable } from '../../platform/db/schema/index.js';

const COLUMNS = [
  'id',
  'user_id',
  'platform_slug',
  'platform_user_id',
  'username',
  'display_name',
  'profile_image_url',
  'scopes',
  'is_active',
  'bot_status',
  'connected_at',
  'last_refreshed_at',
] as const;
const WITH_TOKENS = [...COLUMNS, 'access_token_sealed', 'refresh_token_sealed', 'token_expires_at'] as const;

/** The access token of an integration whose tokens were forgotten (`waygate secrets reset`; the column is never null). */
export const FORGOTTEN = '';

/** What a completed connection writes (the rest of the row has defaults). */
export type Connection = Pick<
  Selectable<IntegrationsTable>,
  | 'user_id'
  | 'platform_slug'
  | 'platform_user_id'
  | 'username'
  | 'display_name'
  | 'profile_image_url'
  | 'scopes'
  | 'access_token_sealed'
  | 'refresh_token_sealed'
  | 'token_expires_at'
  | 'connected_at'
>;

export type TokenChanges = Pick<
  Updateable<IntegrationsTable>,
  'access_token_sealed' | 'refresh_token_sealed' | 'token_expires_at' | 'scopes' | 'last_refreshed_at'
>;

export function createIntegrationsRepo(db: Kysely<Schema>) {
  return {
    listOfUser: (userId: string, platformSlug?: string) => {
      let query = db.selectFrom('integrations').select(COLUMNS).where('user_id', '=', userId);
      if (platformSlug !== undefined) query = query.where('platform_slug', '=', platformSlug);
      return query.orderBy('created_at').orderBy('id').execute();
    },

    /** One integration with its sealed tokens (for the service only; never answered). */
    withTokens: (id: string) =>
      db.selectFrom('integrations').select(WITH_TOKENS).where('id', '=', id).executeTakeFirst(),

    exists: (userId: string, platformSlug: string, trx: Kysely<Schema>) =>
      trx
        .selectFrom('integrations')
        .select('id')
        .where('user_id', '=', userId)
        .where('platform_slug', '=', platformSlug)
        .forUpdate()
        .executeTakeFirst(),

    /** Connecting again replaces account and tokens; id, bot_status and created_at stay. */
    upsert: (connection: Connection, trx: Kysely<Schema>) =>
      trx
        .insertInto('integrations')
        .values(connection)
        .onConflict((conflict) =>
          conflict.columns(['user_id', 'platform_slug']).doUpdateSet({
            ...connection,
            is_active: true,
            last_refreshed_at: null,
            updated_at: connection.connected_at,
          }),
        )
        .returning(COLUMNS)
        .executeTakeFirstOrThrow(),

    updateTokens: (id: string, changes: TokenChanges, now: Date) =>
      db
        .updateTable('integrations')
        .set({ ...changes, updated_at: now })
        .where('id', '=', id)
        .execute(),

    deactivate: (id: string, now: Date) =>
      db.updateTable('integrations').set({ is_active: false, updated_at: now }).where('id', '=', id).execute(),

    /** Drops every integration's sealed tokens and deactivates it (connect again); returns how many had tokens. */
    forgetAllTokens: async (now: Date, trx: Kysely<Schema>) => {
      const result = await trx
        .updateTable('integrations')
        .set({
          is_active: false,
          access_token_sealed: FORGOTTEN,
          refresh_token_sealed: null,
          token_expires_at: null,
          updated_at: now,
        })
        .where('access_token_sealed', '<>', FORGOTTEN)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    setBotStatus: (id: string, status: IntegrationBotStatus, now: Date) =>
      db.updateTable('integrations').set({ bot_status: status, updated_at: now }).where('id', '=', id).execute(),

    delete: (id: string, trx: Kysely<Schema>) => trx.deleteFrom('integrations').where('id', '=', id).executeTakeFirst(),
  };
}

export type IntegrationRow = Awaited<ReturnType<ReturnType<typeof createIntegrationsRepo>['listOfUser']>>[number];
