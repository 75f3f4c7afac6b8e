import type { Kysely } from 'kysely';
import type { Schema } from '../../platform/db/schema.js';

export const EMAIL_PLATFORM = 'email';

export function createUsersRepo(db: Kysely<Schema>) {
  return {
    findById(id: string, executor: Kysely<Schema> = db) {
      return executor.selectFrom('users').selectAll().where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
    },

    findByUsername(username: string, executor: Kysely<Schema> = db) {
      return executor.selectFrom('users').selectAll().where('username', '=', username).where('deleted_at', 'is', null).executeTakeFirst();
    },

    /** The email/password account with this address, with its user (when not deleted). */
    findEmailAccount(email: string, executor: Kysely<Schema> = db) {
      return executor
        .selectFrom('platform_accounts as pa')
        .innerJoin('platforms as p', 'p.id', 'pa.platform_id')
        .innerJoin('users as u', 'u.id', 'pa.user_id')
        .select(['pa.id', 'pa.user_id', 'pa.email', 'pa.password_hash', 'p.enabled as platform_enabled'])
        .where('p.slug', '=', EMAIL_PLATFORM)
        .where('pa.platform_user_id', '=', email)
        .where('u.deleted_at', 'is', null)
        .executeTakeFirst();
    },

    /** The user's email/password account, if they have one. */
    findEmailAccountOfUser(userId: string) {
      return db
        .selectFrom('platform_accounts as pa')
        .innerJoin('platforms as p', 'p.id', 'pa.platform_id')
        .select(['pa.id', 'pa.email', 'pa.password_hash', 'p.enabled as platform_enabled'])
        .where('p.slug', '=', EMAIL_PLATFORM)
        .where('pa.user_id', '=', userId)
        .executeTakeFirst();
    },

    /** Creates a user with an email/password account as its primary account; run inside a transaction. */
    async createWithEmailAccount(trx: Kysely<Schema>, input: { username: string; email: string; passwordHash: string }) {
      const user = await trx.insertInto('users').values({ username: input.username }).returningAll().executeTakeFirstOrThrow();
      const platform = await trx.selectFrom('platforms').select('id').where('slug', '=', EMAIL_PLATFORM).executeTakeFirstOrThrow();
      const account = await trx
        .insertInto('platform_accounts')
        .values({
          user_id: user.id,
          platform_id: platform.id,
          platform_user_id: input.email,
          email: input.email,
          username: input.username,
          password_hash: input.passwordHash,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      await trx.updateTable('users').set({ primary_platform_account_id: account.id }).where('id', '=', user.id).execute();
      return { ...user, primary_platform_account_id: account.id };
    },

    async recordLogin(userId: string, executor: Kysely<Schema> = db) {
      await executor.updateTable('users').set({ last_login_at: new Date() }).where('id', '=', userId).execute();
    },
  };
}

export type UsersRepo = ReturnType<typeof createUsersRepo>;
