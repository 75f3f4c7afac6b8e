import type { Kysely } from 'kysely';
import type { Schema } from '../../platform/db/schema.js';
import type { AccountTokenPurpose } from '../account-tables.js';

/** SQL for pending registrations and password-reset tokens; tokens are looked up by their SHA-256 only. */
export function createTokensRepo(db: Kysely<Schema>) {
  return {
    /** Whether an unexpired pending registration holds this email or username. */
    async pendingRegistrationHolds(email: string, username: string, executor: Kysely<Schema> = db) {
      const row = await executor
        .selectFrom('pending_registrations')
        .select(['email', 'username'])
        .where((eb) => eb.or([eb('email', '=', email), eb('username', '=', username)]))
        .where('expires_at', '>', new Date())
        .executeTakeFirst();
      return row ? { email: row.email === email, username: row.username === username } : undefined;
    },

    /** Expired rows no longer reserve their email or username. */
    async deleteExpiredRegistrations(email: string, username: string, executor: Kysely<Schema> = db) {
      await executor
        .deleteFrom('pending_registrations')
        .where((eb) => eb.or([eb('email', '=', email), eb('username', '=', username)]))
        .where('expires_at', '<=', new Date())
        .execute();
    },

    insertPendingRegistration(
      row: { email: string; username: string; password_hash: string; token_hash: string; expires_at: Date },
      executor: Kysely<Schema> = db,
    ) {
      return executor.insertInto('pending_registrations').values(row).returning(['id', 'expires_at']).executeTakeFirstOrThrow();
    },

    findLivePendingRegistration(tokenHash: string, executor: Kysely<Schema> = db) {
      return executor
        .selectFrom('pending_registrations')
        .selectAll()
        .where('token_hash', '=', tokenHash)
        .where('expires_at', '>', new Date())
        .executeTakeFirst();
    },

    /** Deletes a pending registration; false when another request took it first. */
    async deletePendingRegistration(id: string, executor: Kysely<Schema> = db): Promise<boolean> {
      const result = await executor.deleteFrom('pending_registrations').where('id', '=', id).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    /** What an unused, unexpired account token is for, or undefined. */
    async purposeOf(tokenHash: string): Promise<AccountTokenPurpose | undefined> {
      const row = await db
        .selectFrom('account_tokens')
        .select('purpose')
        .where('token_hash', '=', tokenHash)
        .where('used_at', 'is', null)
        .where('expires_at', '>', new Date())
        .executeTakeFirst();
      return row?.purpose;
    },

    /** A new reset token replaces any older unused one of the user. */
    async replaceResetToken(userId: string, tokenHash: string, expiresAt: Date, executor: Kysely<Schema> = db) {
      await executor
        .deleteFrom('account_tokens')
        .where('user_id', '=', userId)
        .where('purpose', '=', 'password_reset')
        .where('used_at', 'is', null)
        .execute();
      await executor
        .insertInto('account_tokens')
        .values({ purpose: 'password_reset', user_id: userId, token_hash: tokenHash, expires_at: expiresAt })
        .execute();
    },

    /**
     * Marks a live reset token used and returns its user; undefined when the token is unknown,
     * expired or already used (the update is the check, so a token works exactly once).
     */
    async consumeResetToken(tokenHash: string, executor: Kysely<Schema> = db) {
      return executor
        .updateTable('account_tokens')
        .set({ used_at: new Date() })
        .where('token_hash', '=', tokenHash)
        .where('purpose', '=', 'password_reset')
        .where('used_at', 'is', null)
        .where('expires_at', '>', new Date())
        .returning('user_id')
        .executeTakeFirst();
    },
  };
}
