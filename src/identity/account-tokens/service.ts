import type { Kysely } from 'kysely';
import type { Schema } from '../../platform/db/schema/index.js';
import type { AccountTokenPurpose } from '../../platform/db/schema/index.js';
import type { Clock } from '../../platform/clock.js';

/**
 * The single-use tokens mailed for password resets, email changes and email
 * links (table account_tokens). Only their SHA-256 is stored; a token works
 * once, until it expires. The rule for a new request is the same everywhere:
 * issue the new token, send its mail (undoing the token when that fails), and
 * only then remove the user's older ones, so a failed send never loses a link
 * that still works.
 */
export function createAccountTokens(db: Kysely<Schema>, clock: Clock) {
  const unused = (executor: Kysely<Schema>, purpose: AccountTokenPurpose, userId: string) =>
    executor
      .deleteFrom('account_tokens')
      .where('user_id', '=', userId)
      .where('purpose', '=', purpose)
      .where('used_at', 'is', null);

  return {
    issue(
      purpose: AccountTokenPurpose,
      row: { user_id: string; token_hash: string; expires_at: Date; email?: string; password_hash?: string },
      executor: Kysely<Schema> = db,
    ) {
      return executor
        .insertInto('account_tokens')
        .values({ ...row, purpose })
        .returning(['id', 'expires_at'])
        .executeTakeFirstOrThrow();
    },

    async deleteById(id: string, executor: Kysely<Schema> = db): Promise<void> {
      await executor.deleteFrom('account_tokens').where('id', '=', id).execute();
    },

    /** After a new token's mail went out: the user's older unused tokens of that purpose stop working. */
    async removeOthers(
      purpose: AccountTokenPurpose,
      userId: string,
      keepId: string,
      executor: Kysely<Schema> = db,
    ): Promise<void> {
      await unused(executor, purpose, userId).where('id', '!=', keepId).execute();
    },

    /** Removes the user's unused tokens of a purpose; returns how many of them were still live. */
    async removePending(purpose: AccountTokenPurpose, userId: string, executor: Kysely<Schema> = db): Promise<number> {
      const rows = await unused(executor, purpose, userId).returning('expires_at').execute();
      const now = clock.now().getTime();
      return rows.filter((row) => row.expires_at.getTime() > now).length;
    },

    /** Every unused token of the user (deletion; an address change voids resets mailed to the old one). */
    async removeAllOf(userId: string, purposes: AccountTokenPurpose[], executor: Kysely<Schema> = db): Promise<void> {
      await executor
        .deleteFrom('account_tokens')
        .where('user_id', '=', userId)
        .where('purpose', 'in', purposes)
        .where('used_at', 'is', null)
        .execute();
    },

    /** The user's newest live token of a purpose. */
    pendingOf(purpose: AccountTokenPurpose, userId: string, executor: Kysely<Schema> = db) {
      return executor
        .selectFrom('account_tokens')
        .select(['id', 'email', 'expires_at'])
        .where('user_id', '=', userId)
        .where('purpose', '=', purpose)
        .where('used_at', 'is', null)
        .where('expires_at', '>', clock.now())
        .orderBy('created_at', 'desc')
        .executeTakeFirst();
    },

    /**
     * Marks a live token used and returns it; undefined when it is unknown, of another purpose,
     * expired or used already (the update is the check, so a token works exactly once).
     */
    consume(purpose: AccountTokenPurpose, tokenHash: string, executor: Kysely<Schema> = db) {
      return executor
        .updateTable('account_tokens')
        .set({ used_at: clock.now() })
        .where('token_hash', '=', tokenHash)
        .where('purpose', '=', purpose)
        .where('used_at', 'is', null)
        .where('expires_at', '>', clock.now())
        .returning(['id', 'user_id', 'email', 'password_hash'])
        .executeTakeFirst();
    },

    /** Removes used and expired tokens (a used email link still held a password hash); returns how many. */
    async purgeSpent(): Promise<number> {
      const result = await db
        .deleteFrom('account_tokens')
        .where((eb) => eb.or([eb('expires_at', '<=', clock.now()), eb('used_at', 'is not', null)]))
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    /** What a live token is for, or undefined. */
    async purposeOf(tokenHash: string): Promise<AccountTokenPurpose | undefined> {
      const row = await db
        .selectFrom('account_tokens')
        .select('purpose')
        .where('token_hash', '=', tokenHash)
        .where('used_at', 'is', null)
        .where('expires_at', '>', clock.now())
        .executeTakeFirst();
      return row?.purpose;
    },
  };
}

export type AccountTokens = ReturnType<typeof createAccountTokens>;
