import { sql, type Kysely } from 'kysely';
import type { Schema } from '../../platform/db/schema/index.js';
import type { Clock } from '../../platform/clock.js';

/** Rows per UPDATE when writing activity: keeps each statement well under the parameter limit. */
const ACTIVITY_BATCH = 1000;

export function createSessionsRepo(db: Kysely<Schema>, clock: Clock) {
  return {
    /** The user's unexpired sessions, newest activity first. */
    listLiveOfUser: (userId: string) =>
      db
        .selectFrom('sessions')
        .select(['id', 'ip_address', 'user_agent', 'provider', 'last_activity_at', 'created_at', 'expires_at'])
        .where('user_id', '=', userId)
        .where('expires_at', '>', clock.now())
        .orderBy('last_activity_at', 'desc')
        .orderBy('created_at', 'desc')
        .execute(),

    /** Deletes one session of this user; returns its token hash, or undefined when the user has no such session. */
    async deleteOfUser(userId: string, sessionId: string, executor: Kysely<Schema> = db): Promise<string | undefined> {
      const row = await executor
        .deleteFrom('sessions')
        .where('id', '=', sessionId)
        .where('user_id', '=', userId)
        .where('expires_at', '>', clock.now())
        .returning('token_hash')
        .executeTakeFirst();
      return row?.token_hash;
    },

    /** Deletes the user's unexpired sessions except one; returns what was deleted. */
    deleteOthersOfUser: (userId: string, keepSessionId: string, executor: Kysely<Schema> = db) =>
      executor
        .deleteFrom('sessions')
        .where('user_id', '=', userId)
        .where('id', '!=', keepSessionId)
        .where('expires_at', '>', clock.now())
        .returning(['id', 'token_hash'])
        .execute(),

    /** Deletes the session with this token hash; returns it, or undefined when there was none. */
    deleteByHash: (tokenHash: string, executor: Kysely<Schema> = db) =>
      executor
        .deleteFrom('sessions')
        .where('token_hash', '=', tokenHash)
        .returning(['id', 'user_id'])
        .executeTakeFirst(),

    /** Removes sessions past their expiry (they no longer authenticate anyway); returns how many. */
    async deleteExpired(): Promise<number> {
      const result = await db.deleteFrom('sessions').where('expires_at', '<=', clock.now()).executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    async recordActivity(entries: [string, Date][]): Promise<void> {
      for (let start = 0; start < entries.length; start += ACTIVITY_BATCH) {
        const rows = entries
          .slice(start, start + ACTIVITY_BATCH)
          .map(([id, at]) => sql`(${id}::uuid, ${at.toISOString()}::timestamptz)`);
        await sql`
          update sessions as s set last_activity_at = v.at
          from (values ${sql.join(rows)}) as v (id, at)
          where s.id = v.id and s.last_activity_at < v.at
        `.execute(db);
      }
    },
  };
}

export type SessionsRepo = ReturnType<typeof createSessionsRepo>;
