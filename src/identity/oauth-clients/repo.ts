import type { Kysely, Selectable, Updateable } from 'kysely';
import type { OAuthClientsTable, Schema } from '../../platform/db/schema/index.js';
import type { Cache } from '../../platform/kv/cache.js';

export const CLIENT_COLUMNS = [
  'id',
  'name',
  'description',
  'logo_url',
  'homepage_url',
  'privacy_policy_url',
  'terms_of_service_url',
  'redirect_uris',
  'allowed_scopes',
  'client_type',
  'is_active',
  'is_first_party',
  'owner_user_id',
  'created_at',
  'updated_at',
] as const;

export type ClientChanges = Omit<Updateable<OAuthClientsTable>, 'id' | 'created_at' | 'updated_at'>;
export type ClientWithSecret = Selectable<OAuthClientsTable>;

/**
 * `cache` holds the rows `withSecret` reads (the OAuth provider asks for its client at every grant);
 * each write below invalidates the client it touches when it is made, so a changed secret, a narrowed,
 * deactivated or deleted client is seen at once on every node.
 */
export function createOAuthClientsRepo(db: Kysely<Schema>, cache: Cache<ClientWithSecret>) {
  // Keyed by the id as the database writes it: a route may be given a UUID in capitals.
  const key = (id: string) => id.toLowerCase();
  const withSecret = (id: string) =>
    cache.get(key(id), () =>
      db
        .selectFrom('oauth_clients')
        .select([...CLIENT_COLUMNS, 'secret_hash'])
        .where('id', '=', id)
        .executeTakeFirst(),
    );

  return {
    list: (ownerId?: string) => {
      let query = db.selectFrom('oauth_clients').select(CLIENT_COLUMNS).orderBy('created_at', 'desc').orderBy('id');
      if (ownerId !== undefined) query = query.where('owner_user_id', '=', ownerId);
      return query.execute();
    },

    /** The client with its secret hash (for the OAuth provider to authenticate it), through the cache. */
    withSecret,

    /** The client without its secret hash, through the cache. */
    async get(id: string) {
      const client = await withSecret(id);
      if (!client) return undefined;
      const { secret_hash: _secret, ...shown } = client;
      return shown;
    },

    /** The ids of the clients a user owns (their rows go with the user when it is purged). */
    async ownedBy(userId: string, trx: Kysely<Schema>): Promise<string[]> {
      const rows = await trx.selectFrom('oauth_clients').select('id').where('owner_user_id', '=', userId).execute();
      return rows.map((row) => row.id);
    },

    insert: (
      client: ClientChanges & { name: string; redirect_uris: string[]; client_type: 'confidential' | 'public' },
      trx: Kysely<Schema>,
    ) => trx.insertInto('oauth_clients').values(client).returning(CLIENT_COLUMNS).executeTakeFirstOrThrow(),

    async update(id: string, changes: ClientChanges, now: Date, trx: Kysely<Schema>) {
      const updated = await trx
        .updateTable('oauth_clients')
        .set({ ...changes, updated_at: now })
        .where('id', '=', id)
        .returning(CLIENT_COLUMNS)
        .executeTakeFirstOrThrow();
      await cache.invalidate([key(id)]);
      return updated;
    },

    lock: (id: string, trx: Kysely<Schema>) =>
      trx.selectFrom('oauth_clients').select(CLIENT_COLUMNS).where('id', '=', id).forUpdate().executeTakeFirst(),

    async delete(id: string, trx: Kysely<Schema>): Promise<void> {
      await trx.deleteFrom('oauth_clients').where('id', '=', id).execute();
      await cache.invalidate([key(id)]);
    },

    /** Forgets clients whose rows went another way (with their owner, by the foreign key's cascade). */
    forget: (ids: string[]) => cache.invalidate(ids.map(key)),
  };
}
