import { sql, type Kysely } from 'kysely';
import type { Schema } from '../../platform/db/schema.js';
import { EMAIL_PLATFORM } from '../users/repo.js';

/**
 * SQL of platform accounts and email-link tokens. The user's primary account pointer
 * (users.primary_platform_account_id) is part of this area: it is set and read here.
 */
export function createAccountsRepo(db: Kysely<Schema>) {
  const accounts = (executor: Kysely<Schema>) =>
    executor
      .selectFrom('platform_accounts as pa')
      .innerJoin('platforms as p', 'p.id', 'pa.platform_id')
      .innerJoin('users as u', 'u.id', 'pa.user_id')
      .select([
        'pa.id',
        'pa.platform_id',
        'p.name as platform_name',
        'p.slug as platform_slug',
        'pa.platform_user_id',
        'p.is_oauth',
        sql<boolean>`coalesce(u.primary_platform_account_id = pa.id, false)`.as('is_primary'),
        'pa.username',
        'pa.email',
        'pa.avatar_url',
        'pa.created_at',
        'pa.updated_at',
      ]);

  const liveLinkTokens = (executor: Kysely<Schema>) =>
    executor
      .selectFrom('account_tokens')
      .where('purpose', '=', 'email_link')
      .where('used_at', 'is', null)
      .where('expires_at', '>', new Date());

  return {
    listOfUser: (userId: string, executor: Kysely<Schema> = db) =>
      accounts(executor).where('pa.user_id', '=', userId).orderBy('pa.created_at').orderBy('pa.id').execute(),

    findOfUser: (userId: string, accountId: string, executor: Kysely<Schema> = db) =>
      accounts(executor).where('pa.user_id', '=', userId).where('pa.id', '=', accountId).executeTakeFirst(),

    /**
     * The live user row, locked until the transaction ends: account changes of one user (unlink,
     * make primary, link) then run one after the other, so "never remove the last account" holds.
     */
    lockUser: (userId: string, trx: Kysely<Schema>) =>
      trx
        .selectFrom('users')
        .select(['id', 'username', 'primary_platform_account_id'])
        .where('id', '=', userId)
        .where('deleted_at', 'is', null)
        .forUpdate()
        .executeTakeFirst(),

    setPrimary: async (userId: string, accountId: string, trx: Kysely<Schema>) => {
      await trx.updateTable('users').set({ primary_platform_account_id: accountId, updated_at: new Date() }).where('id', '=', userId).execute();
    },

    deleteAccount: async (accountId: string, trx: Kysely<Schema>) => {
      await trx.deleteFrom('platform_accounts').where('id', '=', accountId).execute();
    },

    /** Whether the user has an email/password account. */
    hasEmailAccount: async (userId: string, executor: Kysely<Schema> = db) =>
      Boolean(
        await executor
          .selectFrom('platform_accounts as pa')
          .innerJoin('platforms as p', 'p.id', 'pa.platform_id')
          .select('pa.id')
          .where('p.slug', '=', EMAIL_PLATFORM)
          .where('pa.user_id', '=', userId)
          .executeTakeFirst(),
      ),

    /** Whether any email account (of any user, deleted ones included: the address stays reserved) has this address. */
    emailAddressTaken: async (email: string, executor: Kysely<Schema> = db) =>
      Boolean(
        await executor
          .selectFrom('platform_accounts as pa')
          .innerJoin('platforms as p', 'p.id', 'pa.platform_id')
          .select('pa.id')
          .where('p.slug', '=', EMAIL_PLATFORM)
          .where('pa.platform_user_id', '=', email)
          .executeTakeFirst(),
      ),

    async createEmailAccount(trx: Kysely<Schema>, input: { userId: string; email: string; username: string; passwordHash: string }) {
      const platform = await trx.selectFrom('platforms').select('id').where('slug', '=', EMAIL_PLATFORM).executeTakeFirstOrThrow();
      const account = await trx
        .insertInto('platform_accounts')
        .values({
          user_id: input.userId,
          platform_id: platform.id,
          platform_user_id: input.email,
          email: input.email,
          username: input.username,
          password_hash: input.passwordHash,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return account.id;
    },

    async insertLinkToken(input: { userId: string; email: string; passwordHash: string; tokenHash: string; expiresAt: Date }) {
      const row = await db
        .insertInto('account_tokens')
        .values({
          purpose: 'email_link',
          user_id: input.userId,
          token_hash: input.tokenHash,
          email: input.email,
          password_hash: input.passwordHash,
          expires_at: input.expiresAt,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return row.id;
    },

    /** A new email-link request replaces the user's older unused ones. */
    deleteOtherLinkTokens: async (userId: string, keepId: string) => {
      await db
        .deleteFrom('account_tokens')
        .where('user_id', '=', userId)
        .where('purpose', '=', 'email_link')
        .where('used_at', 'is', null)
        .where('id', '!=', keepId)
        .execute();
    },

    deleteToken: async (id: string) => {
      await db.deleteFrom('account_tokens').where('id', '=', id).execute();
    },

    /**
     * Marks a live email-link token used and returns it; undefined when unknown, expired or
     * already used (the update is the check, so a token works exactly once).
     */
    consumeLinkToken: (tokenHash: string, trx: Kysely<Schema>) =>
      trx
        .updateTable('account_tokens')
        .set({ used_at: new Date() })
        .where('token_hash', '=', tokenHash)
        .where('purpose', '=', 'email_link')
        .where('used_at', 'is', null)
        .where('expires_at', '>', new Date())
        .returning(['id', 'user_id', 'email', 'password_hash'])
        .executeTakeFirst(),

    pendingLinkOf: (userId: string) =>
      liveLinkTokens(db).select(['email', 'expires_at']).where('user_id', '=', userId).orderBy('created_at', 'desc').executeTakeFirst(),

    /** Removes the user's unused email-link tokens; returns how many of them were still live. */
    async cancelPendingLinks(userId: string): Promise<number> {
      const rows = await db
        .deleteFrom('account_tokens')
        .where('user_id', '=', userId)
        .where('purpose', '=', 'email_link')
        .where('used_at', 'is', null)
        .returning('expires_at')
        .execute();
      const now = Date.now();
      return rows.filter((row) => row.expires_at.getTime() > now).length;
    },
  };
}

export type AccountsRepo = ReturnType<typeof createAccountsRepo>;
export type PlatformAccount = NonNullable<Awaited<ReturnType<AccountsRepo['findOfUser']>>>;
