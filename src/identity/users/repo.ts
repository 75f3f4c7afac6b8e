import { sql, type Kysely, type Selectable } from 'kysely';
import type { Schema, UsersTable } from '../../platform/db/schema/index.js';
import type { Cache } from '../../platform/kv/cache.js';
import { banInForce } from '../bans/index.js';
import { EMAIL_PLATFORM } from '../login-providers/service.js';

const ACCOUNT_COLUMNS = [
  'pa.id',
  'pa.user_id',
  'pa.platform_user_id',
  'pa.username',
  'pa.email',
  'pa.avatar_url',
] as const;

export interface UserChanges {
  username?: string;
  privacy_mode?: boolean;
  avatars_enabled?: boolean;
  preferred_locale?: string | null;
  primary_platform_account_id?: string;
  deleted_at?: Date;
  last_login_at?: Date;
}

export type UserRow = Selectable<UsersTable>;

/** Sign-in accounts (`pa`) with their platform (`p`) and user (`u`), for a query to narrow and select from. */
const accountRows = (executor: Kysely<Schema>) =>
  executor
    .selectFrom('platform_accounts as pa')
    .innerJoin('platforms as p', 'p.id', 'pa.platform_id')
    .innerJoin('users as u', 'u.id', 'pa.user_id');

/** An account as GET /v1/users/{id}/accounts lists it (PlatformAccount of users/schemas.ts). */
const listedAccounts = (executor: Kysely<Schema>) =>
  accountRows(executor).select([
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

/** The email/password sign-in accounts (`pa`, with their platform `p`), for a query to narrow. */
const emailAccounts = (db: Kysely<Schema>) =>
  db
    .selectFrom('platform_accounts as pa')
    .innerJoin('platforms as p', 'p.id', 'pa.platform_id')
    .where('p.slug', '=', EMAIL_PLATFORM);

/** The sign-in columns of an email account. */
const SIGN_IN_COLUMNS = ['pa.id', 'pa.email', 'pa.password_hash', 'p.enabled as platform_enabled'] as const;

/**
 * One statement for a password sign-in: the user named by `identifier` (as a username first, else as the
 * address of an email account) and that user's email account, if any (the one with this address first).
 * Each way of naming the user is an index probe, so the statement costs the same whether or not the user
 * exists (the query-plan test holds it to that).
 */
export function passwordLoginQuery(db: Kysely<Schema>, identifier: string) {
  const named = db
    .selectFrom('users')
    .select(['id', sql<number>`0`.as('rank')])
    .where('username', '=', identifier)
    .unionAll(
      db
        .selectFrom('platform_accounts')
        .select(['user_id as id', sql<number>`1`.as('rank')])
        // The platform's id (not a join) so that the probe uses both columns of the unique index.
        .where('platform_id', '=', db.selectFrom('platforms').select('id').where('slug', '=', EMAIL_PLATFORM))
        .where('platform_user_id', '=', identifier),
    );
  return db
    .selectFrom(named.as('named'))
    .innerJoin('users as u', 'u.id', 'named.id')
    .leftJoinLateral(
      emailAccounts(db)
        .select(SIGN_IN_COLUMNS)
        .where('pa.user_id', '=', sql.ref<string>('u.id'))
        .orderBy(sql<boolean>`pa.platform_user_id = ${identifier}`, 'desc')
        .limit(1)
        .as('account'),
      (join) => join.onTrue(),
    )
    .selectAll('u')
    .select(['account.id as account_id', 'account.email', 'account.password_hash', 'account.platform_enabled'])
    .where('u.deleted_at', 'is', null)
    .orderBy('named.rank')
    .limit(1);
}

/**
 * `cache` holds the rows `findById` reads (every GET /v1/users/me, every sign-in); each write below
 * invalidates the user it touches when it is made, and the cache keeps that user out for a few
 * seconds so an open transaction's commit is not undone by a read just before it.
 */
export function createUsersRepo(db: Kysely<Schema>, cache: Cache<UserRow>) {
  /** Adds an email/password account (sign-in name = the address) to a user; returns its id. */
  async function createEmailAccount(
    trx: Kysely<Schema>,
    input: { userId: string; email: string; username: string; passwordHash: string },
  ) {
    const platform = await trx
      .selectFrom('platforms')
      .select('id')
      .where('slug', '=', EMAIL_PLATFORM)
      .executeTakeFirstOrThrow();
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
  }

  return {
    /** Users not deleted. */
    count: async () =>
      Number(
        (
          await db
            .selectFrom('users')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('deleted_at', 'is', null)
            .executeTakeFirstOrThrow()
        ).n,
      ),

    /** The user (not deleted); inside a transaction from the database, else through the cache. */
    findById(id: string, executor: Kysely<Schema> = db): Promise<UserRow | undefined> {
      const read = () =>
        executor
          .selectFrom('users')
          .selectAll()
          .where('id', '=', id)
          .where('deleted_at', 'is', null)
          .executeTakeFirst();
      return executor === db ? cache.get(id, read) : read();
    },

    /** Name and locale of a user, deleted or not (a deleted user stays until the purge). */
    findIncludingDeleted(id: string) {
      return db.selectFrom('users').select(['username', 'preferred_locale']).where('id', '=', id).executeTakeFirst();
    },

    /** The usernames of these users, deleted ones included (they stay until the purge), in one query. */
    async usernamesOf(ids: readonly string[]): Promise<Map<string, string>> {
      if (ids.length === 0) return new Map();
      const rows = await db
        .selectFrom('users')
        .select(['id', 'username'])
        .where('id', 'in', [...ids])
        .execute();
      return new Map(rows.map((row) => [row.id, row.username]));
    },

    findSignInUser(id: string, now: Date) {
      return db
        .selectFrom('users as u')
        .selectAll('u')
        .select(
          emailAccounts(db).select('pa.email').where('pa.user_id', '=', sql.ref<string>('u.id')).limit(1).as('email'),
        )
        .where('u.id', '=', id)
        .where('u.deleted_at', 'is', null)
        .where((eb) => eb.not(banInForce('u.id', now)))
        .executeTakeFirst();
    },

    findByUsername(username: string, executor: Kysely<Schema> = db) {
      return executor
        .selectFrom('users')
        .selectAll()
        .where('username', '=', username)
        .where('deleted_at', 'is', null)
        .executeTakeFirst();
    },

    /** The email/password account with this address, with its user (when not deleted). */
    findEmailAccount(email: string, executor: Kysely<Schema> = db) {
      return emailAccounts(executor)
        .innerJoin('users as u', 'u.id', 'pa.user_id')
        .select([...SIGN_IN_COLUMNS, 'pa.user_id'])
        .where('pa.platform_user_id', '=', email)
        .where('u.deleted_at', 'is', null)
        .executeTakeFirst();
    },

    /** What a password sign-in needs (`passwordLoginQuery`): the user and their email account, if any. */
    async findPasswordLogin(identifier: string) {
      const row = await passwordLoginQuery(db, identifier).executeTakeFirst();
      if (!row) return { user: undefined, account: undefined };
      const { account_id, email, password_hash, platform_enabled, ...user } = row;
      return {
        user,
        account:
          account_id === null
            ? undefined
            : { id: account_id, email, password_hash, platform_enabled: platform_enabled! },
      };
    },

    /** The user's email/password account, if they have one. */
    findEmailAccountOfUser(userId: string, executor: Kysely<Schema> = db) {
      return emailAccounts(executor).select(SIGN_IN_COLUMNS).where('pa.user_id', '=', userId).executeTakeFirst();
    },

    createEmailAccount,

    /** Creates a user with an email/password account as its primary account; run inside a transaction. */
    async createWithEmailAccount(
      trx: Kysely<Schema>,
      input: { username: string; email: string; passwordHash: string },
    ) {
      const user = await trx
        .insertInto('users')
        .values({ username: input.username })
        .returningAll()
        .executeTakeFirstOrThrow();
      const accountId = await createEmailAccount(trx, { userId: user.id, ...input });
      await trx
        .updateTable('users')
        .set({ primary_platform_account_id: accountId })
        .where('id', '=', user.id)
        .execute();
      await cache.invalidate([user.id]);
      return { ...user, primary_platform_account_id: accountId };
    },

    /** Sets the password of the user's email account; returns its address and the username, or undefined without one. */
    async setEmailPassword(userId: string, passwordHash: string, executor: Kysely<Schema> = db) {
      const account = await executor
        .updateTable('platform_accounts')
        .set({ password_hash: passwordHash, updated_at: new Date() })
        .where('user_id', '=', userId)
        .where('platform_id', '=', (eb) => eb.selectFrom('platforms').select('id').where('slug', '=', EMAIL_PLATFORM))
        .where('user_id', 'in', (eb) => eb.selectFrom('users').select('id').where('deleted_at', 'is', null))
        .returning('email')
        .executeTakeFirst();
      if (!account) return undefined;
      const user = await executor.selectFrom('users').select('username').where('id', '=', userId).executeTakeFirst();
      return { email: account.email, username: user?.username ?? null };
    },

    async recordLogin(userId: string, now: Date, executor: Kysely<Schema> = db) {
      await executor.updateTable('users').set({ last_login_at: now }).where('id', '=', userId).execute();
      await cache.invalidate([userId]);
    },

    /** One page of users, oldest first: active ones, or (`deleted`) those in the grace period; only holders of `roleId` when given. */
    async page(
      limit: number,
      offset: number,
      { roleId, deleted = false }: { roleId?: string | undefined; deleted?: boolean | undefined } = {},
    ) {
      let query = db.selectFrom('users').where('deleted_at', deleted ? 'is not' : 'is', null);
      // Role membership is read here (not through the access service) so the filter and the
      // paging stay one query; it is a read of user_roles, never a write.
      if (roleId !== undefined) {
        query = query.where('id', 'in', (eb) =>
          eb.selectFrom('user_roles').select('user_id').where('role_id', '=', roleId),
        );
      }
      const [rows, count] = await Promise.all([
        query.selectAll().orderBy('created_at').orderBy('id').limit(limit).offset(offset).execute(),
        query.select((eb) => eb.fn.countAll<string>().as('total')).executeTakeFirstOrThrow(),
      ]);
      return { rows, total: Number(count.total) };
    },

    /** Whether any user, deleted ones included (their names stay reserved), has this username. */
    async usernameTaken(username: string, executor: Kysely<Schema> = db): Promise<boolean> {
      return Boolean(
        await executor.selectFrom('users').select('id').where('username', '=', username).executeTakeFirst(),
      );
    },

    async update(id: string, changes: UserChanges, executor: Kysely<Schema> = db) {
      const updated = await executor
        .updateTable('users')
        .set({ ...changes, updated_at: new Date() })
        .where('id', '=', id)
        .where('deleted_at', 'is', null)
        .returningAll()
        .executeTakeFirst();
      await cache.invalidate([id]);
      return updated;
    },

    /** The user row locked for the rest of the transaction (not deleted). */
    async deleteAccount(accountId: string, trx: Kysely<Schema>): Promise<void> {
      await trx.deleteFrom('platform_accounts').where('id', '=', accountId).execute();
    },

    /** The user row, deleted or not (the deletion lifecycle reads and restores deleted users). */
    findAnyById: (id: string) =>
      db.selectFrom('users').select(['id', 'deleted_at']).where('id', '=', id).executeTakeFirst(),

    lockAnyById: (id: string, trx: Kysely<Schema>) =>
      trx.selectFrom('users').select(['id', 'deleted_at']).where('id', '=', id).forUpdate().executeTakeFirst(),

    async restore(id: string, trx: Kysely<Schema>) {
      await trx.updateTable('users').set({ deleted_at: null, updated_at: new Date() }).where('id', '=', id).execute();
      await cache.invalidate([id]);
    },

    /** Removes the user row; their accounts and everything else keyed to them go with it (foreign keys). */
    async purge(id: string, trx: Kysely<Schema>) {
      await trx.deleteFrom('users').where('id', '=', id).execute();
      await cache.invalidate([id]);
    },

    /** One user deleted before `before` that no other transaction is purging, locked until commit. */
    claimDeletedBefore: (before: Date, trx: Kysely<Schema>) =>
      trx
        .selectFrom('users')
        .select('id')
        .where('deleted_at', '<=', before)
        .orderBy('deleted_at')
        .limit(1)
        .forUpdate()
        .skipLocked()
        .executeTakeFirst(),

    lockById(id: string, trx: Kysely<Schema>) {
      return trx
        .selectFrom('users')
        .selectAll()
        .where('id', '=', id)
        .where('deleted_at', 'is', null)
        .forUpdate()
        .executeTakeFirst();
    },

    /** Whether an email/password account (of any user, deleted ones included) has this address. */
    async emailAccountExists(email: string, executor: Kysely<Schema> = db): Promise<boolean> {
      const row = await emailAccounts(executor)
        .select('pa.id')
        .where('pa.platform_user_id', '=', email)
        .executeTakeFirst();
      return Boolean(row);
    },

    /** Points an email/password account at a new address (its sign-in name and its email). */
    async setEmailAccountAddress(accountId: string, email: string, executor: Kysely<Schema> = db) {
      await executor
        .updateTable('platform_accounts')
        .set({ platform_user_id: email, email, updated_at: new Date() })
        .where('id', '=', accountId)
        .execute();
    },

    /** The user's accounts as GET /v1/users/{id}/accounts lists them, oldest first. */
    listedAccountsOf: (userId: string, executor: Kysely<Schema> = db) =>
      listedAccounts(executor).where('pa.user_id', '=', userId).orderBy('pa.created_at').orderBy('pa.id').execute(),

    listedAccountOf: (userId: string, accountId: string, executor: Kysely<Schema> = db) =>
      listedAccounts(executor).where('pa.user_id', '=', userId).where('pa.id', '=', accountId).executeTakeFirst(),

    accountsOf(userId: string, executor: Kysely<Schema> = db) {
      return accountRows(executor)
        .select([...ACCOUNT_COLUMNS, 'p.slug as platform'])
        .where('pa.user_id', '=', userId)
        .orderBy((eb) => eb.case().when('pa.id', '=', eb.ref('u.primary_platform_account_id')).then(0).else(1).end())
        .orderBy('pa.created_at')
        .execute();
    },

    async setAvatar(accountId: string, avatarUrl: string | null, executor: Kysely<Schema> = db) {
      await executor
        .updateTable('platform_accounts')
        .set({ avatar_url: avatarUrl, updated_at: new Date() })
        .where('id', '=', accountId)
        .execute();
    },

    async clearAvatars(userId: string, executor: Kysely<Schema> = db) {
      await executor
        .updateTable('platform_accounts')
        .set({ avatar_url: null, updated_at: new Date() })
        .where('user_id', '=', userId)
        .where('avatar_url', 'is not', null)
        .execute();
    },

    /**
     * Accounts (of users not deleted) carrying this email address: the email/password account
     * first, then a user's primary account, then the oldest.
     */
    accountsWithEmail(email: string, executor: Kysely<Schema> = db) {
      return executor
        .selectFrom('platform_accounts as pa')
        .innerJoin('platforms as p', 'p.id', 'pa.platform_id')
        .innerJoin('users as u', 'u.id', 'pa.user_id')
        .select([...ACCOUNT_COLUMNS, 'p.slug as platform'])
        .where('pa.email', '=', email)
        .where('u.deleted_at', 'is', null)
        .orderBy((eb) => eb.case().when('p.slug', '=', EMAIL_PLATFORM).then(0).else(1).end())
        .orderBy((eb) => eb.case().when('pa.id', '=', eb.ref('u.primary_platform_account_id')).then(0).else(1).end())
        .orderBy('pa.created_at')
        .execute();
    },

    /**
     * A user that is not deleted, with the slug of their primary sign-in platform (the provider
     * recorded on sessions created for them through the internal endpoint).
     */
    findWithPrimaryProvider: (userId: string) =>
      db
        .selectFrom('users as u')
        .leftJoin('platform_accounts as pa', 'pa.id', 'u.primary_platform_account_id')
        .leftJoin('platforms as p', 'p.id', 'pa.platform_id')
        .select(['u.id', 'p.slug as provider'])
        .where('u.id', '=', userId)
        .where('u.deleted_at', 'is', null)
        .executeTakeFirst(),

    /** The account of this provider identity, with its user's deletion marker. */
    findAccountOfIdentity(platformId: string, platformUserId: string, executor: Kysely<Schema> = db) {
      return executor
        .selectFrom('platform_accounts as pa')
        .innerJoin('users as u', 'u.id', 'pa.user_id')
        .select([...ACCOUNT_COLUMNS, 'u.deleted_at'])
        .where('pa.platform_id', '=', platformId)
        .where('pa.platform_user_id', '=', platformUserId)
        .forUpdate()
        .executeTakeFirst();
    },

    insertAccount(
      account: {
        user_id: string;
        platform_id: string;
        platform_user_id: string;
        username: string | null;
        email: string | null;
        avatar_url: string | null;
      },
      executor: Kysely<Schema> = db,
    ) {
      return executor.insertInto('platform_accounts').values(account).returning('id').executeTakeFirstOrThrow();
    },

    async updateAccountProfile(
      accountId: string,
      profile: { username: string | null; email: string | null; avatar_url: string | null },
      executor: Kysely<Schema> = db,
    ) {
      await executor
        .updateTable('platform_accounts')
        .set({ ...profile, updated_at: new Date() })
        .where('id', '=', accountId)
        .execute();
    },

    /** The flat user shape (user fields plus one account's email, avatar and provider). */
    flatUserOfAccount(accountId: string, executor: Kysely<Schema> = db) {
      return accountRows(executor)
        .select([
          'u.id',
          'u.primary_platform_account_id',
          'u.username',
          'pa.email',
          'pa.avatar_url',
          'p.slug as platform',
          'u.created_at',
          'u.updated_at',
          'u.last_login_at',
          'u.privacy_mode',
          'u.preferred_locale',
        ])
        .where('pa.id', '=', accountId)
        .executeTakeFirstOrThrow();
    },

    insertUser(user: { username: string }, executor: Kysely<Schema> = db) {
      return executor.insertInto('users').values(user).returningAll().executeTakeFirstOrThrow();
    },
  };
}

export type UsersRepo = ReturnType<typeof createUsersRepo>;
