import type { Kysely, Updateable } from 'kysely';
import type { OAuthClientsTable, Schema } from '../../platform/db/schema/index.js';

export const CLIENT_COLUMNS = [
  'id', 'name', 'description', 'logo_url', 'homepage_url', 'privacy_policy_url', 'terms_of_service_url', 'redirect_uris',
  'allowed_scopes', 'client_type', 'is_active', 'is_first_party', 'owner_user_id', 'created_at', 'updated_at',
] as const;

export type ClientChanges = Omit<Updateable<OAuthClientsTable>, 'id' | 'created_at' | 'updated_at'>;

export function createOAuthClientsRepo(db: Kysely<Schema>) {
  return {
    list: (ownerId?: string) => {
      let query = db.selectFrom('oauth_clients').select(CLIENT_COLUMNS).orderBy('created_at', 'desc').orderBy('id');
      if (ownerId !== undefined) query = query.where('owner_user_id', '=', ownerId);
      return query.execute();
    },

    /** The client with its secret hash, for the OAuth provider to authenticate it. */
    withSecret: (id: string) => db.selectFrom('oauth_clients').select([...CLIENT_COLUMNS, 'secret_hash']).where('id', '=', id).executeTakeFirst(),

    get: (id: string) => db.selectFrom('oauth_clients').select(CLIENT_COLUMNS).where('id', '=', id).executeTakeFirst(),

    insert: (client: ClientChanges & { name: string; redirect_uris: string[]; client_type: 'confidential' | 'public' }, trx: Kysely<Schema>) =>
      trx.insertInto('oauth_clients').values(client).returning(CLIENT_COLUMNS).executeTakeFirstOrThrow(),

    update: (id: string, changes: ClientChanges, now: Date, trx: Kysely<Schema>) =>
      trx.updateTable('oauth_clients').set({ ...changes, updated_at: now }).where('id', '=', id).returning(CLIENT_COLUMNS).executeTakeFirstOrThrow(),

    lock: (id: string, trx: Kysely<Schema>) =>
      trx.selectFrom('oauth_clients').select(CLIENT_COLUMNS).where('id', '=', id).forUpdate().executeTakeFirst(),

    delete: (id: string, trx: Kysely<Schema>) => trx.deleteFrom('oauth_clients').where('id', '=', id).execute(),
  };
}
