import { sql, type Kysely } from 'kysely';
import type { Schema } from '../../platform/db/schema/index.js';
import type { Clock } from '../../platform/clock.js';

/** Codes that may be tried on one login challenge; after that it is closed (sign in again). */
export const MAX_CHALLENGE_ATTEMPTS = 5;

export function createTwoFactorRepo(db: Kysely<Schema>, clock: Clock) {
  return {
    state: (userId: string, executor: Kysely<Schema> = db) =>
      executor.selectFrom('user_two_factor').selectAll().where('user_id', '=', userId).executeTakeFirst(),

    /** Starts (or restarts) a setup; an enabled secret is never touched here. */
    async savePending(userId: string, platformId: string, sealed: string, expiresAt: Date): Promise<void> {
      await db
        .insertInto('user_two_factor')
        .values({
          user_id: userId,
          platform_id: platformId,
          pending_secret_sealed: sealed,
          pending_expires_at: expiresAt,
        })
        .onConflict((oc) =>
          oc.column('user_id').doUpdateSet({
            // The platform belongs to the enabled 2FA; a setup started while it is on must not move it.
            platform_id: sql<string>`case when user_two_factor.enabled_at is null then excluded.platform_id else user_two_factor.platform_id end`,
            pending_secret_sealed: sealed,
            pending_expires_at: expiresAt,
            updated_at: clock.now(),
          }),
        )
        .execute();
    },

    /** Turns the pending secret into the active one, unless another setup replaced it meanwhile. */
    async enable(userId: string, pendingSealed: string, step: number, trx: Kysely<Schema>): Promise<boolean> {
      const result = await trx
        .updateTable('user_two_factor')
        .set({
          secret_sealed: pendingSealed,
          enabled_at: clock.now(),
          pending_secret_sealed: null,
          pending_expires_at: null,
          last_used_step: step,
          updated_at: clock.now(),
        })
        .where('user_id', '=', userId)
        .where('pending_secret_sealed', '=', pendingSealed)
        .where('enabled_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    /** Records a TOTP step as used; false when it (or a later one) was used already: a replay. */
    async claimStep(userId: string, step: number, executor: Kysely<Schema> = db): Promise<boolean> {
      const result = await executor
        .updateTable('user_two_factor')
        .set({ last_used_step: step })
        .where('user_id', '=', userId)
        .where((eb) => eb.or([eb('last_used_step', 'is', null), eb('last_used_step', '<', step)]))
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    /** Disabling: the state, every backup code and every open login challenge go. */
    async removeAll(userId: string, trx: Kysely<Schema>): Promise<void> {
      await trx.deleteFrom('two_factor_backup_codes').where('user_id', '=', userId).execute();
      await trx.deleteFrom('two_factor_challenges').where('user_id', '=', userId).execute();
      await trx.deleteFrom('user_two_factor').where('user_id', '=', userId).execute();
    },

    /** Every user's 2FA, on or being set up, with all backup codes and open challenges; returns the removed states. */
    async removeEveryone(trx: Kysely<Schema>): Promise<{ user_id: string; enabled_at: Date | null }[]> {
      await trx.deleteFrom('two_factor_backup_codes').execute();
      await trx.deleteFrom('two_factor_challenges').execute();
      return trx.deleteFrom('user_two_factor').returning(['user_id', 'enabled_at']).execute();
    },

    async replaceBackupCodes(userId: string, codeHashes: string[], trx: Kysely<Schema>): Promise<void> {
      await trx.deleteFrom('two_factor_backup_codes').where('user_id', '=', userId).execute();
      await trx
        .insertInto('two_factor_backup_codes')
        .values(codeHashes.map((code_hash) => ({ user_id: userId, code_hash })))
        .execute();
    },

    async unusedBackupCodes(userId: string, executor: Kysely<Schema> = db): Promise<number> {
      const row = await executor
        .selectFrom('two_factor_backup_codes')
        .select((eb) => eb.fn.countAll<string>().as('count'))
        .where('user_id', '=', userId)
        .where('used_at', 'is', null)
        .executeTakeFirstOrThrow();
      return Number(row.count);
    },

    /** Marks an unused backup code used; false when there is no such unused code. */
    async useBackupCode(userId: string, codeHash: string, executor: Kysely<Schema> = db): Promise<boolean> {
      const result = await executor
        .updateTable('two_factor_backup_codes')
        .set({ used_at: clock.now() })
        .where('user_id', '=', userId)
        .where('code_hash', '=', codeHash)
        .where('used_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    createChallenge: (challenge: { token_hash: string; user_id: string; provider: string; expires_at: Date }) =>
      db
        .insertInto('two_factor_challenges')
        .values(challenge)
        .returning(['id', 'expires_at'])
        .executeTakeFirstOrThrow(),

    /** The user of an open challenge, without using one of its attempts. */
    openChallenge: (tokenHash: string) =>
      db
        .selectFrom('two_factor_challenges')
        .select('user_id')
        .where('token_hash', '=', tokenHash)
        .where('consumed_at', 'is', null)
        .where('expires_at', '>', clock.now())
        .executeTakeFirst(),

    claimAttempt: (tokenHash: string) =>
      db
        .updateTable('two_factor_challenges')
        .set({ attempts: sql`attempts + 1` })
        .where('token_hash', '=', tokenHash)
        .where('consumed_at', 'is', null)
        .where('expires_at', '>', clock.now())
        .where('attempts', '<', MAX_CHALLENGE_ATTEMPTS)
        .returningAll()
        .executeTakeFirst(),

    /** Closes a challenge once; false when another request got there first. */
    async consumeChallenge(id: string, trx: Kysely<Schema>): Promise<boolean> {
      const result = await trx
        .updateTable('two_factor_challenges')
        .set({ consumed_at: clock.now() })
        .where('id', '=', id)
        .where('consumed_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    /** Removes sign-in challenges that can no longer be used; returns how many. */
    async deleteFinishedChallenges(): Promise<number> {
      const result = await db
        .deleteFrom('two_factor_challenges')
        .where((eb) => eb.or([eb('expires_at', '<=', clock.now()), eb('consumed_at', 'is not', null)]))
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    /** Closes every open challenge of the user (their password changed). */
    async closeChallengesOf(userId: string, executor: Kysely<Schema> = db): Promise<void> {
      await executor
        .updateTable('two_factor_challenges')
        .set({ consumed_at: clock.now() })
        .where('user_id', '=', userId)
        .where('consumed_at', 'is', null)
        .execute();
    },
  };
}

export type TwoFactorRepo = ReturnType<typeof createTwoFactorRepo>;
