import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { AuditWriter } from '../../platform/audit.js';
import type { Caller } from '../../platform/auth/caller.js';
import { hashPassword } from '../../platform/auth/passwords.js';
import { hashToken, newToken } from '../../platform/auth/tokens.js';
import type { Schema } from '../../platform/db/schema/index.js';

import type { Mailer } from '../../platform/mail/mailer.js';
import { emailLinkMail } from '../../platform/mail/messages.js';
import { MailedTokenErrors, VERIFY_EMAIL_PATH, mailLink, sendOrUndo } from '../../platform/mail/token-mail.js';
import type { LoginProvidersService } from '../login-providers/service.js';
import { EMAIL_PLATFORM } from '../login-providers/service.js';
import { normaliseEmail, type UsersService } from './service.js';
import { createAccountTokens } from '../account-tokens/service.js';
import { AccountErrors, UserErrors } from './errors.js';
import { isConstraintViolation } from '../../platform/db/errors.js';
import type { Clock } from '../../platform/clock.js';
import type { Static } from 'typebox';
import type { EmailLinkRequestBody } from './schemas.js';

export const EMAIL_LINK_LIFETIME_MS = 24 * 3600 * 1000;

/** A sign-in account as the routes answer it (read by the users service, which owns the table). */
type PlatformAccount = NonNullable<Awaited<ReturnType<UsersService['listedAccountOf']>>>;

interface Deps {
  db: Kysely<Schema>;
  clock: Clock;
  users: Pick<
    UsersService,
    | 'findById'
    | 'lockById'
    | 'findEmailAccountOfUser'
    | 'emailAccountExists'
    | 'setPrimaryAccount'
    | 'createEmailAccount'
    | 'assertMayManage'
    | 'deleteAccount'
    | 'listedAccountsOf'
    | 'listedAccountOf'
  >;
  loginProviders: Pick<LoginProvidersService, 'isEnabled'>;
  mailer: Mailer;
  audit: AuditWriter;
  log: FastifyBaseLogger;
}

/** Unique key of (platform, id at the platform); for email accounts the id is the address. */
const EMAIL_ACCOUNT_KEY = 'platform_accounts_platform_id_platform_user_id_key';

/**
 * A user's sign-in accounts (linked login providers) and adding email/password sign-in to a user: built beside
 * the users service, whose table platform_accounts they are, and working on it through that service.
 */
export function createAccountsService(deps: Deps) {
  const tokens = createAccountTokens(deps.db, deps.clock);

  async function existingUser(userId: string) {
    const user = await deps.users.findById(userId);
    if (!user) throw UserErrors.not_found();
    return user;
  }

  /** The locked user and one of their accounts, or 404 (an account of another user is not found either). */
  async function lockedAccount(userId: string, accountId: string, trx: Kysely<Schema>) {
    const user = await deps.users.lockById(userId, trx);
    if (!user) throw UserErrors.not_found();
    const account = await deps.users.listedAccountOf(userId, accountId, trx);
    if (!account) throw AccountErrors.not_found();
    return { user, account };
  }

  /**
   * Consumes an email-link token and creates the user's email account from it, in one transaction.
   * 400 for unknown, expired or used tokens (and users deleted since); 409 when the user got an email
   * account or the address was taken in the meantime (the token then stays usable).
   */
  async function completeEmailLink(
    request: FastifyRequest,
    token: string,
  ): Promise<{ userId: string; platformAccountId: string }> {
    return deps.db.transaction().execute(async (trx) => {
      const link = await tokens.consume('email_link', hashToken(token), trx);
      if (!link?.email || !link.password_hash) throw MailedTokenErrors.invalid();
      const user = await deps.users.lockById(link.user_id, trx);
      if (!user) throw MailedTokenErrors.invalid();
      if (await deps.users.findEmailAccountOfUser(user.id, trx)) throw AccountErrors.email_already_linked();
      if (await deps.users.emailAccountExists(link.email, trx)) throw UserErrors.email_in_use();
      const platformAccountId = await deps.users
        .createEmailAccount(trx, {
          userId: user.id,
          email: link.email,
          username: user.username,
          passwordHash: link.password_hash,
        })
        // A registration or link that committed between the check and the insert hits the unique key.
        .catch((err: unknown) => {
          throw isConstraintViolation(err, EMAIL_ACCOUNT_KEY) ? UserErrors.email_in_use() : err;
        });
      if (!user.primary_platform_account_id) await deps.users.setPrimaryAccount(user.id, platformAccountId, trx);
      await deps.audit.record(
        request,
        {
          eventType: 'account_linked',
          userId: user.id,
          actorId: user.id,
          resourceType: 'platform_account',
          resourceId: platformAccountId,
          metadata: { platform: EMAIL_PLATFORM },
        },
        trx,
      );
      return { userId: user.id, platformAccountId };
    });
  }

  return {
    completeEmailLink,

    async list(userId: string): Promise<PlatformAccount[]> {
      await existingUser(userId);
      return deps.users.listedAccountsOf(userId);
    },

    async makePrimary(
      request: FastifyRequest,
      caller: Caller,
      userId: string,
      accountId: string,
    ): Promise<PlatformAccount> {
      await deps.users.assertMayManage(caller, userId);
      return deps.db.transaction().execute(async (trx) => {
        const { user, account } = await lockedAccount(userId, accountId, trx);
        if (!account.is_primary) {
          await deps.users.setPrimaryAccount(userId, accountId, trx);
          await deps.audit.record(
            request,
            {
              eventType: 'user_updated',
              userId,
              actorId: caller.userId,
              resourceType: 'user',
              resourceId: userId,
              description: 'primary platform account changed',
              metadata: {
                field: 'primary_platform_account_id',
                old_value: user.primary_platform_account_id,
                new_value: accountId,
                platform: account.platform_slug,
              },
            },
            trx,
          );
        }
        return { ...account, is_primary: true };
      });
    },

    /** Unlinks a login provider; never the email account, the only account or the primary one. */
    async unlink(request: FastifyRequest, caller: Caller, userId: string, accountId: string): Promise<void> {
      await deps.users.assertMayManage(caller, userId);
      await deps.db.transaction().execute(async (trx) => {
        const { account } = await lockedAccount(userId, accountId, trx);
        if (account.platform_slug === EMAIL_PLATFORM) throw AccountErrors.unlink_email();
        if ((await deps.users.listedAccountsOf(userId, trx)).length <= 1) throw AccountErrors.unlink_last();
        if (account.is_primary) throw AccountErrors.unlink_primary();
        await deps.users.deleteAccount(accountId, trx);
        await deps.audit.record(
          request,
          {
            eventType: 'account_unlinked',
            userId,
            actorId: caller.userId,
            resourceType: 'platform_account',
            resourceId: accountId,
            metadata: { platform: account.platform_slug, platform_user_id: account.platform_user_id },
          },
          trx,
        );
      });
    },

    /** Mails a 24-hour link that adds an email/password account to the user; replaces an older pending link. */
    async requestEmailLink(
      request: FastifyRequest,
      caller: Caller,
      userId: string,
      input: Static<typeof EmailLinkRequestBody>,
    ) {
      const user = await existingUser(userId);
      // Whoever links an address and password to a user can sign in as them.
      await deps.users.assertMayManage(caller, userId);
      const email = normaliseEmail(input.email);
      if (!(await deps.loginProviders.isEnabled(EMAIL_PLATFORM))) throw AccountErrors.email_sign_in_disabled();
      if (await deps.users.findEmailAccountOfUser(userId)) throw AccountErrors.email_already_linked();
      if (await deps.users.emailAccountExists(email)) throw UserErrors.email_in_use();

      const token = newToken('');
      const expiresAt = new Date(deps.clock.now().getTime() + EMAIL_LINK_LIFETIME_MS);
      const passwordHash = await hashPassword(input.password);
      const issued = await tokens.issue('email_link', {
        user_id: userId,
        email,
        password_hash: passwordHash,
        token_hash: hashToken(token),
        expires_at: expiresAt,
      });
      const link = mailLink(request, VERIFY_EMAIL_PATH, token);
      await sendOrUndo(deps, email, emailLinkMail({ link, expiresAt }, user.username), () =>
        tokens.deleteById(issued.id),
      );
      await tokens.removeOthers('email_link', userId, issued.id);
      return { message: 'Verification email sent; follow its link to add email sign-in', expires_at: expiresAt };
    },

    async verifyEmailLink(request: FastifyRequest, token: string) {
      const { platformAccountId } = await completeEmailLink(request, token);
      return { message: 'Email account linked', platform_account_id: platformAccountId };
    },

    async pendingEmailLink(userId: string) {
      await existingUser(userId);
      const pending = await tokens.pendingOf('email_link', userId);
      return { pending: Boolean(pending), email: pending?.email ?? null, expires_at: pending?.expires_at ?? null };
    },

    /** 404 when nothing is pending (as for email changes). */
    async cancelEmailLink(caller: Caller, userId: string) {
      await deps.users.assertMayManage(caller, userId);
      await existingUser(userId);
      if ((await tokens.removePending('email_link', userId)) === 0) throw AccountErrors.no_email_link_pending();
      return { message: 'Pending email link cancelled' };
    },
  };
}

export type AccountsService = ReturnType<typeof createAccountsService>;
