import type { Kysely } from 'kysely';
import type { Schema } from '../../platform/db/schema/index.js';
import { banInForce } from '../bans/index.js';
import type { Clock } from '../../platform/clock.js';

export const API_KEY_COLUMNS = [
  'id',
  'key_prefix',
  'name',
  'description',
  'scopes',
  'is_active',
  'is_system',
  'user_id',
  'expires_at',
  'last_used_at',
  'created_at',
  'updated_at',
] as const;

export interface ApiKeyChanges {
  name?: string;
  description?: string | null;
  scopes?: string[];
  expires_at?: Date | null;
  is_active?: boolean;
  is_system?: boolean;
  user_id?: string | null;
  key_hash?: string;
  key_prefix?: string;
}

export function createApiKeysRepo(db: Kysely<Schema>, clock: Clock) {
  return {
    /** All keys, or only those owned by one user. */
    list(ownerId?: string) {
      let query = db.selectFrom('api_keys').select(API_KEY_COLUMNS).orderBy('created_at', 'desc');
      if (ownerId !== undefined) query = query.where('user_id', '=', ownerId);
      return query.execute();
    },

    async keyHashesOfOwner(userId: string): Promise<string[]> {
      const rows = await db.selectFrom('api_keys').select('key_hash').where('user_id', '=', userId).execute();
      return rows.map((row) => row.key_hash);
    },

    get: (id: string, executor: Kysely<Schema> = db) =>
      executor
        .selectFrom('api_keys')
        .select([...API_KEY_COLUMNS, 'key_hash'])
        .where('id', '=', id)
        .executeTakeFirst(),

    /** A usable key by its hash: active, unexpired, and not owned by a deleted or banned user. */
    findUsable: (keyHash: string) =>
      db
        .selectFrom('api_keys as k')
        .leftJoin('users as u', 'u.id', 'k.user_id')
        .select(['k.id', 'k.key_hash', 'k.scopes', 'k.is_system', 'k.user_id', 'k.expires_at'])
        .where('k.key_hash', '=', keyHash)
        .where('k.is_active', '=', true)
        .where((eb) => eb.or([eb('k.expires_at', 'is', null), eb('k.expires_at', '>', clock.now())]))
        // A key dies with its owner and rests while they are banned; a system key serves the installation, not its owner.
        .where((eb) =>
          eb.or([
            eb('k.user_id', 'is', null),
            eb('k.is_system', '=', true),
            eb.and([eb('u.deleted_at', 'is', null), eb.not(banInForce('k.user_id', clock.now()))]),
          ]),
        )
        .executeTakeFirst(),

    findByHash: (keyHash: string) =>
      db
        .selectFrom('api_keys')
        .select(['id', 'is_system', 'is_active', 'expires_at'])
        .where('key_hash', '=', keyHash)
        .executeTakeFirst(),

    insert: (
      key: {
        key_hash: string;
        key_prefix: string;
        name: string;
        description: string | null;
        scopes: string[];
        is_system: boolean;
        user_id: string | null;
        expires_at: Date | null;
      },
      executor: Kysely<Schema> = db,
    ) => executor.insertInto('api_keys').values(key).returning(API_KEY_COLUMNS).executeTakeFirstOrThrow(),

    update: (id: string, changes: ApiKeyChanges) =>
      db
        .updateTable('api_keys')
        .set({ ...changes, updated_at: clock.now() })
        .where('id', '=', id)
        .returning(API_KEY_COLUMNS)
        .executeTakeFirstOrThrow(),

    delete: (id: string, executor: Kysely<Schema> = db) =>
      executor.deleteFrom('api_keys').where('id', '=', id).execute(),

    /**
     * Before the user's removal: their system keys pass to the installation (no owner), their other
     * keys are deleted; returns the deleted keys' hashes.
     */
    async removeAllOfUser(userId: string, trx: Kysely<Schema>): Promise<string[]> {
      await trx
        .updateTable('api_keys')
        .set({ user_id: null, updated_at: clock.now() })
        .where('user_id', '=', userId)
        .where('is_system', '=', true)
        .execute();
      const rows = await trx.deleteFrom('api_keys').where('user_id', '=', userId).returning('key_hash').execute();
      return rows.map((row) => row.key_hash);
    },

    /** Deletes the user's keys but system keys (which only a super admin's change ends); their hashes. */
    async deleteOwnedBy(userId: string, trx: Kysely<Schema>): Promise<string[]> {
      const rows = await trx
        .deleteFrom('api_keys')
        .where('user_id', '=', userId)
        .where('is_system', '=', false)
        .returning('key_hash')
        .execute();
      return rows.map((row) => row.key_hash);
    },

    async deactivateAllOfUser(userId: string, executor: Kysely<Schema> = db): Promise<string[]> {
      const rows = await executor
        .updateTable('api_keys')
        .set({ is_active: false, updated_at: clock.now() })
        .where('user_id', '=', userId)
        .where('is_active', '=', true)
        // System keys outlive their owner: they cannot be deleted through the API, nor switched off by a deletion.
        .where('is_system', '=', false)
        .returning('key_hash')
        .execute();
      return rows.map((row) => row.key_hash);
    },

    async touch(id: string): Promise<void> {
      await db.updateTable('api_keys').set({ last_used_at: clock.now() }).where('id', '=', id).execute();
    },
  };
}

export type ApiKeysRepo = ReturnType<typeof createApiKeysRepo>;
