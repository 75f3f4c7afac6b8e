import type { Kysely } from 'kysely';
import type { Schema } from '../../platform/db/schema/index.js';

const BAN_COLUMNS = ['id', 'user_id', 'reason', 'banned_by', 'banned_at', 'expires_at'] as const;

/** How a ban is shown: permanent when it has no end. */
const shown = <T extends { expires_at: Date | null }>(row: T) => ({ ...row, is_permanent: row.expires_at === null });

export function createBansRepo(db: Kysely<Schema>) {
  return {
    /** The ban in force at `now`, if any (the newest, should an old one also still run). */
    async inForce(userId: string, now: Date, executor: Kysely<Schema> = db) {
      const row = await executor
        .selectFrom('user_bans')
        .select(BAN_COLUMNS)
        .where('user_id', '=', userId)
        .where('unbanned_at', 'is', null)
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
        .orderBy('banned_at', 'desc')
        .limit(1)
        .executeTakeFirst();
      return row && shown(row);
    },

    async insert(
      ban: {
        user_id: string;
        reason: string | null;
        banned_by: string | null;
        banned_at: Date;
        expires_at: Date | null;
      },
      trx: Kysely<Schema>,
    ) {
      return shown(await trx.insertInto('user_bans').values(ban).returning(BAN_COLUMNS).executeTakeFirstOrThrow());
    },

    /** Lifts the ban of the user in force; returns its id, or undefined when none was. */
    async lift(userId: string, by: { unbanned_by: string | null; unbanned_at: Date }, trx: Kysely<Schema>) {
      const row = await trx
        .updateTable('user_bans')
        .set(by)
        .where('user_id', '=', userId)
        .where('unbanned_at', 'is', null)
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', by.unbanned_at)]))
        .returning('id')
        .executeTakeFirst();
      return row?.id;
    },

    async history(userId: string) {
      const rows = await db
        .selectFrom('user_bans')
        .select([...BAN_COLUMNS, 'unbanned_at', 'unbanned_by'])
        .where('user_id', '=', userId)
        .orderBy('banned_at', 'desc')
        .orderBy('id')
        .execute();
      return rows.map(shown);
    },
  };
}
