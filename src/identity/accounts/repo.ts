import { sql, type Kysely } from 'kysely';
import type { Schema } from '../../platform/db/schema/index.js';
import { EMAIL_PLATFORM } from '../platforms/service.js';

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

  return {
    listOfUser: (userId: string, executor: Kysely<Schema> = db) =>
      accounts(executor).where('pa.user_id', '=', userId).orderBy('pa.created_at').orderBy('pa.id').execute(),

    findOfUser: (userId: string, accountId: string, executor: Kysely<Schema> = db) =>
      accounts(executor).where('pa.user_id', '=', userId).where('pa.id', '=', accountId).executeTakeFirst(),

  };
}

export type AccountsRepo = ReturnType<typeof createAccountsRepo>;
export type PlatformAccount = NonNullable<Awaited<ReturnType<AccountsRepo['findOfUser']>>>;
