import type { Kysely } from 'kysely';
import type { Schema } from '../../platform/db/schema/index.js';

export function createSessionsRepo(db: Kysely<Schema>) {
  return {
    create: (
      session: { token_hash: string; user_id: string; provider: string; ip_address: string | null; user_agent: string | null; expires_at: Date },
      executor: Kysely<Schema> = db,
    ) =>
      executor.insertInto('sessions').values(session).returning(['id', 'expires_at', 'created_at']).executeTakeFirstOrThrow(),

    /** A live session by token hash, with its (not deleted) user. */
    findLive: (tokenHash: string) =>
      db
        .selectFrom('sessions as s')
        .innerJoin('users as u', 'u.id', 's.user_id')
        .select(['s.id', 's.token_hash', 's.user_id', 's.provider', 's.expires_at', 's.created_at'])
        .where('s.token_hash', '=', tokenHash)
        .where('s.expires_at', '>', new Date())
        .where('u.deleted_at', 'is', null)
        .executeTakeFirst(),

    async tokenHashesOfUser(userId: string): Promise<string[]> {
      const rows = await db.selectFrom('sessions').select('token_hash').where('user_id', '=', userId).execute();
      return rows.map((row) => row.token_hash);
    },

    /** Deletes every session of a user; returns their token hashes (to drop from the credential cache). */
    async deleteAllOfUser(userId: string, executor: Kysely<Schema> = db): Promise<string[]> {
      const rows = await executor.deleteFrom('sessions').where('user_id', '=', userId).returning('token_hash').execute();
      return rows.map((row) => row.token_hash);
    },

    /** Deletes a session; returns its token hash, or undefined when there was none. */
    async delete(id: string, executor: Kysely<Schema> = db): Promise<string | undefined> {
      const row = await executor.deleteFrom('sessions').where('id', '=', id).returning('token_hash').executeTakeFirst();
      return row?.token_hash;
    },
  };
}
