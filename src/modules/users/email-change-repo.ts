import type { Kysely } from 'kysely';
import type { Schema } from '../../platform/db/schema.js';

const PURPOSE = 'email_change';

/** SQL for pending email changes: account_tokens rows of purpose email_change (email = the new address). */
export function createEmailChangeRepo(db: Kysely<Schema>) {
  return {
    /** A new request replaces any older unused one of the user: one pending change at a time. */
    async replace(row: { user_id: string; email: string; token_hash: string; expires_at: Date }, executor: Kysely<Schema> = db) {
      await removePending(executor, row.user_id);
      return executor
        .insertInto('account_tokens')
        .values({ ...row, purpose: PURPOSE })
        .returning(['id', 'expires_at'])
        .executeTakeFirstOrThrow();
    },

    async deleteById(id: string, executor: Kysely<Schema> = db) {
      await executor.deleteFrom('account_tokens').where('id', '=', id).execute();
    },

    /** The user's live (unused, unexpired) pending change. */
    pendingOf(userId: string, executor: Kysely<Schema> = db) {
      return executor
        .selectFrom('account_tokens')
        .select(['id', 'email', 'expires_at'])
        .where('user_id', '=', userId)
        .where('purpose', '=', PURPOSE)
        .where('used_at', 'is', null)
        .where('expires_at', '>', new Date())
        .orderBy('created_at', 'desc')
        .executeTakeFirst();
    },

    /** Removes the user's unused changes; returns how many were live. */
    async removePending(userId: string, executor: Kysely<Schema> = db): Promise<number> {
      return removePending(executor, userId);
    },

    /**
     * Marks a live token used and returns its user and new address; undefined when the token is
     * unknown, expired or already used (the update is the check, so a token works exactly once).
     */
    consume(tokenHash: string, executor: Kysely<Schema> = db) {
      return executor
        .updateTable('account_tokens')
        .set({ used_at: new Date() })
        .where('token_hash', '=', tokenHash)
        .where('purpose', '=', PURPOSE)
        .where('used_at', 'is', null)
        .where('expires_at', '>', new Date())
        .returning(['user_id', 'email'])
        .executeTakeFirst();
    },
  };
}

async function removePending(executor: Kysely<Schema>, userId: string): Promise<number> {
  const rows = await executor
    .deleteFrom('account_tokens')
    .where('user_id', '=', userId)
    .where('purpose', '=', PURPOSE)
    .where('used_at', 'is', null)
    .returning('expires_at')
    .execute();
  const now = Date.now();
  return rows.filter((row) => row.expires_at.getTime() > now).length;
}
