import type { Kysely } from 'kysely';
import type { Schema } from '../../platform/db/schema/index.js';
import type { Clock } from '../../platform/clock.js';

/** SQL for pending registrations; their tokens are looked up by SHA-256 only. */
export function createRegistrationRepo(db: Kysely<Schema>, clock: Clock) {
  return {
    /** Whether an unexpired pending registration holds this email or username. */
    async pendingRegistrationHolds(email: string, username: string, executor: Kysely<Schema> = db) {
      const row = await executor
        .selectFrom('pending_registrations')
        .select(['email', 'username'])
        .where((eb) => eb.or([eb('email', '=', email), eb('username', '=', username)]))
        .where('expires_at', '>', clock.now())
        .executeTakeFirst();
      return row ? { email: row.email === email, username: row.username === username } : undefined;
    },

    /** Removes every expired pending registration (each holds a password hash); returns how many. */
    async purgeExpiredRegistrations(): Promise<number> {
      const result = await db
        .deleteFrom('pending_registrations')
        .where('expires_at', '<=', clock.now())
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    /** Expired rows no longer reserve their email or username. */
    async deleteExpiredRegistrations(email: string, username: string, executor: Kysely<Schema> = db) {
      await executor
        .deleteFrom('pending_registrations')
        .where((eb) => eb.or([eb('email', '=', email), eb('username', '=', username)]))
        .where('expires_at', '<=', clock.now())
        .execute();
    },

    insertPendingRegistration(
      row: { email: string; username: string; password_hash: string; token_hash: string; expires_at: Date },
      executor: Kysely<Schema> = db,
    ) {
      return executor
        .insertInto('pending_registrations')
        .values(row)
        .returning(['id', 'expires_at'])
        .executeTakeFirstOrThrow();
    },

    findLivePendingRegistration(tokenHash: string, executor: Kysely<Schema> = db) {
      return executor
        .selectFrom('pending_registrations')
        .selectAll()
        .where('token_hash', '=', tokenHash)
        .where('expires_at', '>', clock.now())
        .executeTakeFirst();
    },

    /** Deletes a pending registration; false when another request took it first. */
    async deletePendingRegistration(id: string, executor: Kysely<Schema> = db): Promise<boolean> {
      const result = await executor.deleteFrom('pending_registrations').where('id', '=', id).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}
