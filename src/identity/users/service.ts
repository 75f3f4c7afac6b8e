import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Config } from '../../config.js';
import type { AuditWriter } from '../../platform/audit.js';
import type { Caller } from '../../platform/auth/caller.js';
import type { Schema } from '../../platform/db/schema/index.js';

import { hashPassword } from '../../platform/auth/passwords.js';
import type { Mailer } from '../../platform/mail/mailer.js';
import type { Clock } from '../../platform/clock.js';
import { afterCommit, type DomainEventBus } from '../../platform/events.js';
import type { LoginProvidersService } from '../login-providers/service.js';
import type { AccessService } from '../access/service.js';
import { createEmailChangeService } from './email-change.js';
import { createOAuthSignIn, type OAuthSignInInput } from './oauth.js';
import { createUsersRepo, type UserChanges, type UserRow } from './repo.js';
import { withDates, type Caches } from '../../platform/kv/cache.js';
import { createUserDeletion, DELETION_GRACE_MS } from './deletion.js';
import { OauthSignInErrors, UserErrors } from './errors.js';
import type { Static } from 'typebox';
import type { UpdateUserBody } from './schemas.js';
import { isUuid } from '../../platform/http/schemas.js';

export const USERNAME_PATTERN = /^[a-z0-9_]{3,30}$/;
export const MIN_PASSWORD_LENGTH = 8;

export interface NewEmailUser {
  email: string;
  username: string;
  password: string;
}

export type UserUpdate = Static<typeof UpdateUserBody>;

/** Revocation hooks of other areas: they change rows in the caller's transaction and return a cache flush for after the commit. */

export interface UsersDeps {
  db: Kysely<Schema>;
  config: Pick<Config, 'supportedLocales' | 'registrationEnabled'>;
  mailer: Pick<Mailer, 'send'>;
  audit: AuditWriter;
  log: FastifyBaseLogger;
  clock: Clock;
  access: Pick<AccessService, 'grantRoleDirectly' | 'assertMayManageUser' | 'lockSuperAdmins'>;
  loginProviders: Pick<LoginProvidersService, 'find'>;
  /** Reactions to a deletion (sessions, API keys) run inside its transaction and report what they revoked. */
  events: Pick<DomainEventBus, 'emit'>;
  caches: Pick<Caches, 'define'>;
}

/** Every node forgets a changed user at once; the expiries only bound what a lost message could leave behind. */
const USER_CACHE = {
  sharedTtlSecs: 300,
  localTtlMs: 15_000,
  decode: withDates<UserRow>('created_at', 'updated_at', 'last_login_at', 'deleted_at'),
};

/** User records: profile, username, locale, email change, deletion, and the social sign-in upsert. */
export function createUsersService(deps: UsersDeps) {
  const { db } = deps;
  const repo = createUsersRepo(db, deps.caches.define('users', USER_CACHE));
  // Bans are read through the bans module, which is built after this one (`useBanStatus`).
  let isBanned: (userId: string) => Promise<boolean> = async () => false;
  const emailChange = createEmailChangeService({
    db,
    clock: deps.clock,
    repo,
    mailer: deps.mailer,
    audit: deps.audit,
    log: deps.log,
    events: deps.events,
  });
  const deletion = createUserDeletion({
    db,
    clock: deps.clock,
    repo,
    audit: deps.audit,
    events: deps.events,
    access: deps.access,
    log: deps.log,
  });
  const oauthSignIn = createOAuthSignIn({
    db,
    clock: deps.clock,
    repo,
    audit: deps.audit,
    access: deps.access,
    loginProviders: deps.loginProviders,
    registrationEnabled: deps.config.registrationEnabled,
  });

  async function requireUser(id: string) {
    const user = await repo.findById(id);
    if (!user) throw UserErrors.not_found();
    return user;
  }

  /** The one check for acting on another user (the access module's; see `assertMayManageUser`). */
  const assertMayManage = (caller: Caller, userId: string) => deps.access.assertMayManageUser(caller, userId);

  /** 409 when an email account has the address or a user the name (deleted users' stay reserved). */
  async function assertEmailUserFree(email: string, username: string, executor: Kysely<Schema>): Promise<void> {
    if (await repo.emailAccountExists(email, executor)) throw UserErrors.email_registered();
    if (await repo.usernameTaken(username, executor)) throw UserErrors.username_taken();
  }

  async function withFlatExtras<T extends { id: string }>(row: T) {
    return { ...row, is_banned: await isBanned(row.id) };
  }

  async function update(request: FastifyRequest, caller: Caller, id: string, input: UserUpdate) {
    const username = input.username === undefined ? undefined : checkedUsername(input.username);
    const email = input.email === undefined ? undefined : normaliseEmail(input.email);
    if (input.avatar_url != null) checkedHttpUrl('avatar_url', input.avatar_url);
    if (email !== undefined && caller.userId === id && !caller.isSuperAdmin) {
      throw UserErrors.own_email_needs_confirmation(
        `To change your own email, use POST /v1/users/${id}/email/request-change: the new address must be confirmed first`,
      );
    }
    // A new name takes over the old one's sign-in identifier; every field is the user's own to set.
    await assertMayManage(caller, id);

    const { updated, oldEmail } = await db.transaction().execute(async (trx) => {
      const user = await repo.lockById(id, trx);
      if (!user) throw UserErrors.not_found();
      const changes: UserChanges = {};
      const changed: string[] = [];
      if (username !== undefined && username !== user.username) {
        if (await repo.usernameTaken(username, trx)) throw UserErrors.username_taken();
        changes.username = username;
      }
      if (input.privacy_mode !== undefined && input.privacy_mode !== user.privacy_mode)
        changes.privacy_mode = input.privacy_mode;
      if (input.avatars_enabled !== undefined && input.avatars_enabled !== user.avatars_enabled)
        changes.avatars_enabled = input.avatars_enabled;
      changed.push(...Object.keys(changes));

      const avatarsEnabled = input.avatars_enabled ?? user.avatars_enabled;
      if (input.avatar_url !== undefined) {
        if (input.avatar_url !== null && !avatarsEnabled) throw UserErrors.avatars_disabled();
        if (!user.primary_platform_account_id) throw UserErrors.no_primary_account();
        await repo.setAvatar(user.primary_platform_account_id, input.avatar_url, trx);
        changed.push('avatar_url');
      }
      // Turning avatars off removes every stored avatar URL, not only the primary account's.
      if (input.avatars_enabled === false) await repo.clearAvatars(id, trx);
      const previousEmail = email === undefined ? null : await emailChange.changeDirectly(id, email, trx);
      if (previousEmail !== null) changed.push('email');

      if (changed.length === 0) return { updated: user, oldEmail: null };
      const saved = (await repo.update(id, changes, trx))!;
      await deps.audit.record(
        request,
        {
          eventType: 'user_updated',
          userId: id,
          actorId: caller.userId,
          resourceType: 'user',
          resourceId: id,
          metadata: { fields: changed },
        },
        trx,
      );
      return { updated: saved, oldEmail: previousEmail };
    });
    if (oldEmail)
      await deps.events.emit('user.security_changed', {
        userId: id,
        kind: 'email_changed',
        oldEmail,
        newEmail: email!,
      });
    return updated;
  }

  return {
    useBanStatus(lookup: (userId: string) => Promise<boolean>): void {
      isBanned = lookup;
    },

    // The user records other areas read and write; the rules around them stay in those areas' services.
    findById: repo.findById,
    count: repo.count,
    lockById: repo.lockById,
    findByUsername: repo.findByUsername,
    /** Usernames by user id (for lists naming other users, e.g. a group's members: never their addresses). */
    usernamesOf: repo.usernamesOf,
    findEmailAccount: repo.findEmailAccount,
    findEmailAccountOfUser: repo.findEmailAccountOfUser,
    findPasswordLogin: repo.findPasswordLogin,
    findSignInUser: (id: string) => repo.findSignInUser(id, deps.clock.now()),
    findWithPrimaryProvider: repo.findWithPrimaryProvider,
    emailAccountExists: repo.emailAccountExists,
    accountsOf: repo.accountsOf,
    /** A user's accounts with platform and primary flag (users/accounts.ts lists them), and one of them. */
    listedAccountsOf: repo.listedAccountsOf,
    listedAccountOf: repo.listedAccountOf,
    /** Unlinks one sign-in account (users/accounts.ts decides whether it may go). */
    deleteAccount: repo.deleteAccount,
    recordLogin: (userId: string, executor?: Kysely<Schema>) => repo.recordLogin(userId, deps.clock.now(), executor),
    setEmailPassword: repo.setEmailPassword,
    createWithEmailAccount: repo.createWithEmailAccount,
    createEmailAccount: repo.createEmailAccount,
    setPrimaryAccount: (userId: string, accountId: string, executor?: Kysely<Schema>) =>
      repo.update(userId, { primary_platform_account_id: accountId }, executor),

    /**
     * Validates and creates a user with an email/password account; returns the user. Runs inside the
     * caller's transaction (every query goes through `trx`: the embedded database has one connection).
     */
    async createEmailUser(trx: Kysely<Schema>, input: NewEmailUser) {
      const { email, username } = checkedNewEmailUser(input);
      await assertEmailUserFree(email, username, trx);
      return repo.createWithEmailAccount(trx, { username, email, passwordHash: await hashPassword(input.password) });
    },

    assertEmailUserFree,

    async exists(userId: string): Promise<boolean> {
      return Boolean(await repo.findById(userId));
    },

    /** Ids of the users a search term names: a user id, a username or an email address (exact, any case). */
    async idsMatching(term: string): Promise<string[]> {
      const lower = term.toLowerCase();
      if (isUuid(lower)) return [lower];
      const [byName, byEmail] = await Promise.all([repo.findByUsername(lower), repo.findEmailAccount(lower)]);
      return [...new Set([byName?.id, byEmail?.user_id].filter((id): id is string => Boolean(id)))];
    },

    /** Where a security notice goes: as `contactOf`, also while the user's deletion is pending (the row stays until the purge). */
    async noticeContactOf(userId: string) {
      const [user, account] = await Promise.all([
        repo.findIncludingDeleted(userId),
        repo.findEmailAccountOfUser(userId),
      ]);
      return user && { username: user.username, email: account?.email ?? null, locale: user.preferred_locale };
    },

    /** Where and how to mail a user: their email account's address, username and locale. */
    async contactOf(userId: string) {
      const [user, account] = await Promise.all([repo.findById(userId), repo.findEmailAccountOfUser(userId)]);
      return user && { username: user.username, email: account?.email ?? null, locale: user.preferred_locale };
    },

    list: (
      page: { limit: number; offset: number },
      filter: { roleId?: string | undefined; deleted?: boolean | undefined } = {},
    ) => repo.page(page.limit, page.offset, filter),

    get: requireUser,

    /** The caller's own user; credentials without a user (system and ownerless keys) have none: 404. */
    async me(caller: Caller) {
      if (!caller.userId) throw UserErrors.credential_without_user();
      return requireUser(caller.userId);
    },

    /**
     * Profile from the primary platform account: display_name and picture are that account's name and
     * avatar at its provider. provider is the sign-in provider of the caller's own session when they
     * look at themselves, else the primary provider.
     */
    async profile(caller: Caller, id: string) {
      const user = await requireUser(id);
      const accounts = await repo.accountsOf(id);
      const primary = accounts[0];
      const primaryProvider = primary?.platform ?? null;
      const picture = user.avatars_enabled
        ? (primary?.avatar_url ?? accounts.find((a) => a.avatar_url)?.avatar_url ?? null)
        : null;
      return {
        name: user.username,
        display_name: primary?.username ?? user.username,
        picture,
        provider: caller.userId === id && caller.provider ? caller.provider : primaryProvider,
        primary_provider: primaryProvider,
        last_login_at: user.last_login_at,
        created_at: user.created_at,
        privacy_mode: user.privacy_mode,
        avatars_enabled: user.avatars_enabled,
      };
    },

    update,

    setUsername: (request: FastifyRequest, caller: Caller, id: string, username: string) =>
      update(request, caller, id, { username }),

    async setLocale(request: FastifyRequest, caller: Caller, id: string, locale: string | null) {
      const supported = deps.config.supportedLocales;
      if (locale !== null && !supported.includes(locale))
        throw UserErrors.unsupported_locale(`locale must be one of: ${supported.join(', ')} (or null)`);
      await assertMayManage(caller, id);
      return db.transaction().execute(async (trx) => {
        const user = await repo.update(id, { preferred_locale: locale }, trx);
        if (!user) throw UserErrors.not_found();
        await deps.audit.record(
          request,
          {
            eventType: 'user_updated',
            userId: id,
            actorId: caller.userId,
            resourceType: 'user',
            resourceId: id,
            metadata: { fields: ['preferred_locale'] },
          },
          trx,
        );
        return user;
      });
    },

    /**
     * Soft delete: deleted_at is set and every session and API key of the user is revoked, in one
     * transaction. The last super admin is kept (under the same lock the role removal takes). Also the
     * user's own deletion (POST /v1/users/me/delete), once they have shown who they are.
     */
    async remove(request: FastifyRequest, caller: Caller, id: string): Promise<{ scheduled_deletion_at: Date }> {
      await assertMayManage(caller, id);
      const { onCommit, committed } = afterCommit();
      const purgeAt = await db.transaction().execute(async (trx) => {
        const admins = await deps.access.lockSuperAdmins(trx);
        if (!(await repo.lockById(id, trx))) throw UserErrors.not_found();
        if (admins.size === 1 && admins.has(id)) throw UserErrors.last_super_admin();
        await repo.update(id, { deleted_at: deps.clock.now() }, trx);
        const purgeDate = new Date(deps.clock.nowMs() + DELETION_GRACE_MS);
        const revoked = await deps.events.emit('user.deleting', { userId: id, purgeAt: purgeDate, trx, onCommit });
        await emailChange.removeAllTokensOf(id, trx);
        await deps.audit.record(
          request,
          {
            eventType: 'user_deleted',
            userId: id,
            actorId: caller.userId,
            resourceType: 'user',
            resourceId: id,
            metadata: {
              sessions_revoked: revoked.sessions_revoked ?? 0,
              api_keys_revoked: revoked.api_keys_revoked ?? 0,
              scheduled_deletion_at: purgeDate.toISOString(),
            },
          },
          trx,
        );
        return purgeDate;
      });
      await committed();
      return { scheduled_deletion_at: purgeAt };
    },

    async requestEmailChange(request: FastifyRequest, caller: Caller, id: string, email: string) {
      const address = normaliseEmail(email);
      await assertMayManage(caller, id);
      return emailChange.request(request, id, address);
    },

    assertMayManage,

    deletionStatus: deletion.status,
    /** Judged on the roles the deleted user still holds: a restored super admin is back with all of them. */
    async cancelDeletion(request: FastifyRequest, caller: Caller, id: string) {
      await assertMayManage(caller, id);
      await deletion.cancel(request, caller, id);
    },
    /** POST /v1/admin/users/{id}/force-delete: only for users who hold nothing beyond the caller. */
    async forceDelete(request: FastifyRequest, caller: Caller, id: string, reason: string) {
      await assertMayManage(caller, id);
      await deletion.forceDelete(request, caller, id, reason);
    },
    purgeDue: deletion.purgeDue,

    /** Completes an email change from its mailed token (also used by POST /v1/auth/verify-email). */
    completeEmailChange: (request: FastifyRequest, token: string) => emailChange.complete(request, token),
    pendingEmailChange: (id: string) => emailChange.pending(id),
    async cancelEmailChange(caller: Caller, id: string) {
      await assertMayManage(caller, id);
      return emailChange.cancel(id);
    },

    /**
     * GET /v1/users/email/{email}: the system key and super admins may look up any address;
     * everybody else only an address of their own (403 otherwise, whether or not it exists).
     */
    async findByEmail(caller: Caller, email: string) {
      const address = email.trim().toLowerCase();
      let account: { id: string } | undefined;
      if (caller.isSystem || caller.isSuperAdmin) {
        account = (await repo.accountsWithEmail(address))[0];
      } else {
        // The caller's own account with that address, never another user's who happens to share it.
        const own = caller.userId ? await repo.accountsOf(caller.userId) : [];
        account = own.find((candidate) => candidate.email?.toLowerCase() === address);
        if (!account) throw UserErrors.email_lookup_not_own();
      }
      if (!account) throw UserErrors.email_not_found();
      return withFlatExtras(await repo.flatUserOfAccount(account.id));
    },

    /** POST /v1/users/oauth (system key): create or update the account of a provider identity. */
    async oauthSignIn(request: FastifyRequest, input: OAuthSignInInput) {
      const name = input.name.trim();
      const providerId = input.oauthProviderId.trim();
      if (!name) throw OauthSignInErrors.name_empty();
      if (!providerId) throw OauthSignInErrors.provider_id_empty();
      if (input.image) checkedHttpUrl('image', input.image);
      const email = input.email ? normaliseEmail(input.email) : null;
      const row = await oauthSignIn(request, {
        email,
        name,
        provider: input.oauthProvider.trim().toLowerCase(),
        providerId,
        image: input.image || null,
      });
      return withFlatExtras(row);
    },
  };
}

/** The rules for a new email/password user (400 naming the field); returns the normalised email and username. */
export function checkedNewEmailUser(input: { email: string; username: string; password: string }): {
  email: string;
  username: string;
} {
  const username = checkedUsername(input.username);
  checkedPassword('password', input.password);
  return { email: normaliseEmail(input.email), username };
}

/** Passwords: at least 8 characters on register, reset and email link (400 naming the field). */
export function checkedPassword(field: string, password: string): string {
  if (password.length < MIN_PASSWORD_LENGTH)
    throw UserErrors.password_too_short(`${field} must be at least ${MIN_PASSWORD_LENGTH} characters`);
  return password;
}

export function checkedUsername(raw: string): string {
  const username = raw.trim().toLowerCase();
  if (!USERNAME_PATTERN.test(username)) throw UserErrors.invalid_username();
  return username;
}

/** An address's longest form (RFC 5321's path limit); a longer one is refused before it is looked at. */
const EMAIL_MAX = 320;

/**
 * Lower case and trimmed, with one @, no spaces and a dot inside the domain. Checked without a pattern
 * (`[^\s@]+\.[^\s@]+$` backtracks quadratically on a long run of dots).
 */
export function normaliseEmail(email: string): string {
  const normalised = email.length > EMAIL_MAX * 4 ? '' : email.trim().toLowerCase();
  const at = normalised.indexOf('@');
  const domain = normalised.slice(at + 1);
  const valid =
    normalised.length <= EMAIL_MAX &&
    at > 0 &&
    !domain.includes('@') &&
    !/\s/.test(normalised) &&
    domain.slice(1, -1).includes('.');
  if (!valid) throw UserErrors.invalid_email();
  return normalised;
}

function checkedHttpUrl(field: string, value: string): void {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:'))
    throw UserErrors.invalid_url(`${field} must be an http or https URL`);
}

export type UsersService = ReturnType<typeof createUsersService>;
