import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { AuditWriter } from '../../platform/audit.js';
import type { BotProtection } from '../../platform/bot-protection.js';
import { hashPassword } from '../../platform/auth/passwords.js';
import { hashToken, newToken } from '../../platform/auth/tokens.js';
import type { Schema } from '../../platform/db/schema/index.js';

import type { KeyValueStore } from '../../platform/kv/index.js';
import type { Mailer } from '../../platform/mail/mailer.js';
import { passwordResetMail } from '../../platform/mail/messages.js';
import { MailedTokenErrors, RESET_PASSWORD_PATH, mailLink } from '../../platform/mail/token-mail.js';
import { checkedPassword, normaliseEmail, type UsersService } from '../users/service.js';
import { afterCommit } from '../../platform/events.js';
import type { SessionStore } from '../sessions/service.js';
import type { SignInThrottle } from '../sign-in-throttle/service.js';
import type { OAuthService } from '../oauth/service.js';
import type { TwoFactorService } from '../two-factor/service.js';
import { createAccountTokens } from '../account-tokens/service.js';
import type { Clock } from '../../platform/clock.js';

export const RESET_LIFETIME_MS = 3600 * 1000;
export const RESET_COOLDOWN_SECS = 60;
export const RESET_REQUESTED_MESSAGE = 'If an account with this email exists, a link to reset its password has been sent';
export const RESET_DONE_MESSAGE = 'Password updated; please sign in with the new password';

interface Deps {
  db: Kysely<Schema>;
  clock: Clock;
  botProtection: BotProtection;
  mailer: Mailer;
  users: Pick<UsersService, 'findEmailAccount' | 'setEmailPassword'>;
  sessions: Pick<SessionStore, 'revokeAllOfUser'>;
  audit: AuditWriter;
  /** A 2FA challenge opened with the old password must not outlive it. */
  twoFactor: Pick<TwoFactorService, 'closeChallengesOf'>;
  /** Nor the user's OAuth tokens and grants for any client, or a sign-in on the provider's pages (its browser session). */
  oauth: Pick<OAuthService, 'revokeAllOfUser'>;
  /** Sign-in lockouts of the account end once its password is new. */
  signInThrottle: Pick<SignInThrottle, 'clear'>;
  kv: Pick<KeyValueStore, 'setIfAbsent'>;
  log: FastifyBaseLogger;
}

/** Password reset by a mailed, single-use, 1-hour token; never tells whether an address has an account. */
export function createPasswordResetService(deps: Deps) {
  const tokens = createAccountTokens(deps.db, deps.clock);

  /**
   * One reset mail per address per cooldown: the endpoint is public, and without this anyone could flood
   * an inbox. Checked for every address, with or without an account, so it reveals nothing; a failing
   * store lets the request through.
   */
  async function firstRequestInCooldown(email: string): Promise<boolean> {
    try {
      return await deps.kv.setIfAbsent(`reset:cooldown:${hashToken(email)}`, '1', RESET_COOLDOWN_SECS);
    } catch (err) {
      deps.log.warn({ err }, 'password reset cooldown unavailable');
      return true;
    }
  }

  async function sendResetMail(request: FastifyRequest, account: { user_id: string; email: string }) {
    const token = newToken('');
    const expiresAt = new Date(deps.clock.now().getTime() + RESET_LIFETIME_MS);
    const issued = await deps.db.transaction().execute(async (trx) => {
      await deps.audit.record(request, { eventType: 'password_reset_requested', userId: account.user_id, resourceType: 'user', resourceId: account.user_id }, trx);
      return tokens.issue('password_reset', { user_id: account.user_id, token_hash: hashToken(token), expires_at: expiresAt }, trx);
    });
    try {
      await deps.mailer.send(account.email, passwordResetMail({ link: mailLink(request, RESET_PASSWORD_PATH, token), expiresAt }));
    } catch (err) {
      await tokens.deleteById(issued.id);
      throw err;
    }
    // Only a mail that went out replaces the older link.
    await tokens.removeOthers('password_reset', account.user_id, issued.id);
  }

  return {
    async request(request: FastifyRequest, input: { email: string; turnstile_token?: string }): Promise<void> {
      await deps.botProtection.verify(input.turnstile_token, request.ip);
      const email = normaliseEmail(input.email);
      if (!(await firstRequestInCooldown(email))) return;
      const account = await deps.users.findEmailAccount(email);
      if (!account?.email) return;
      // Not awaited: answering only after the mail went out would tell, by the response time,
      // that the address has an account. A failure is logged, never shown.
      void sendResetMail(request, { user_id: account.user_id, email: account.email }).catch((err: unknown) =>
        deps.log.error({ err }, 'could not start a password reset'),
      );
    },

    /**
     * Sets the new password, uses up the token and ends every session of the user, their OAuth tokens and
     * grants for every client and the provider's browser sessions, all at once; cached credentials are
     * dropped after the commit.
     */
    async complete(request: FastifyRequest, input: { token: string; new_password: string; turnstile_token?: string }): Promise<void> {
      await deps.botProtection.verify(input.turnstile_token, request.ip);
      const passwordHash = await hashPassword(checkedPassword('new_password', input.new_password));
      const { onCommit, committed } = afterCommit();
      const { userId, identifiers } = await deps.db.transaction().execute(async (trx) => {
        const consumed = await tokens.consume('password_reset', hashToken(input.token), trx);
        if (!consumed) throw MailedTokenErrors.invalid();
        const account = await deps.users.setEmailPassword(consumed.user_id, passwordHash, trx);
        if (!account) throw MailedTokenErrors.invalid();
        const revoked = await deps.sessions.revokeAllOfUser(consumed.user_id, trx, onCommit);
        await deps.twoFactor.closeChallengesOf(consumed.user_id, trx);
        // Whoever authorized an app with the old password keeps nothing: its refresh token would rotate for good.
        const oauthTokens = await deps.oauth.revokeAllOfUser(consumed.user_id, trx, onCommit);
        await deps.audit.record(
          request,
          {
            eventType: 'password_changed',
            userId: consumed.user_id,
            resourceType: 'user',
            resourceId: consumed.user_id,
            metadata: { via: 'reset', sessions_revoked: revoked, oauth_tokens_revoked: oauthTokens },
          },
          trx,
        );
        return { userId: consumed.user_id, identifiers: [account.email, account.username].filter((id): id is string => Boolean(id)) };
      });
      await committed();
      await deps.signInThrottle.clear(identifiers, userId);
    },
  };
}

export type PasswordResetService = ReturnType<typeof createPasswordResetService>;
