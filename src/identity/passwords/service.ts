import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { AuditWriter } from '../../platform/audit.js';
import type { BotProtection } from '../../platform/bot-protection.js';
import { hashPassword } from '../../platform/auth/passwords.js';
import type { Caller } from '../../platform/auth/caller.js';
import { hashToken, newToken } from '../../platform/auth/tokens.js';
import type { Schema } from '../../platform/db/schema/index.js';

import type { KeyValueStore } from '../../platform/kv/index.js';
import type { Mailer } from '../../platform/mail/mailer.js';
import { passwordResetMail } from '../../platform/mail/messages.js';
import { MailedTokenErrors, RESET_PASSWORD_PATH, mailLink } from '../../platform/mail/token-mail.js';
import { checkedPassword, normaliseEmail, type UsersService } from '../users/service.js';
import { afterCommit, type DomainEventBus } from '../../platform/events.js';
import type { SessionStore } from '../sessions/service.js';
import type { SignInThrottle } from '../sign-in-throttle/service.js';
import type { OAuthService } from '../oauth/service.js';
import type { TwoFactorService } from '../two-factor/service.js';
import { createAccountTokens } from '../account-tokens/service.js';
import type { Clock } from '../../platform/clock.js';
import type { BreachedPasswordCheck } from './breached-passwords.js';
import { SessionErrors } from '../sessions/errors.js';
import { PasswordChangeErrors } from './errors.js';
import type { Reauthentication } from '../sign-in/index.js';
import type { ChangePasswordBody, CompleteResetBody } from './schemas.js';
import type { Static } from 'typebox';

export const RESET_LIFETIME_MS = 3600 * 1000;
export const RESET_COOLDOWN_SECS = 60;
export const RESET_REQUESTED_MESSAGE =
  'If an account with this email exists, a link to reset its password has been sent';
export const RESET_DONE_MESSAGE = 'Password updated; please sign in with the new password';

interface Deps {
  db: Kysely<Schema>;
  clock: Clock;
  botProtection: BotProtection;
  mailer: Mailer;
  users: Pick<UsersService, 'findEmailAccount' | 'findEmailAccountOfUser' | 'findById' | 'setEmailPassword'>;
  sessions: Pick<SessionStore, 'revokeAllOfUser'>;
  audit: AuditWriter;
  /** A 2FA challenge opened with the old password must not outlive it. */
  twoFactor: Pick<TwoFactorService, 'closeChallengesOf'>;
  /** Nor the user's OAuth tokens and grants for any client, or a sign-in on the provider's pages (its browser session). */
  oauth: Pick<OAuthService, 'revokeAllOfUser'>;
  /** Sign-in lockouts of the account end once its password is new. */
  signInThrottle: Pick<SignInThrottle, 'clear'>;
  /** A change's current password is checked as a sign-in checks it (and counts towards the lockout). */
  reauthentication: Pick<Reauthentication, 'checkCurrentPassword'>;
  kv: Pick<KeyValueStore, 'setIfAbsent'>;
  log: FastifyBaseLogger;
  /** A new password follows registration's rules: long enough and not known from breaches. */
  breachedPasswords: Pick<BreachedPasswordCheck, 'assertNotBreached'>;
  /** Sign-ins and changes the user is told of by mail (the security notices react); passkeys and API keys go on request. */
  events: Pick<DomainEventBus, 'emit'>;
}

/** How many passkeys and API keys a new password took with it, when the user asked (`revoke_passkeys_and_keys`). */
type Removed = { passkeys: number; api_keys: number } | undefined;

export const PASSWORD_CHANGED_MESSAGE = 'Password changed; your other sessions have ended';

/**
 * A new password, by reset (a mailed, single-use, 1-hour token; never tells whether an address has an
 * account) or by change (the signed-in user, giving the current one).
 */
export function createPasswordResetService(deps: Deps) {
  const tokens = createAccountTokens(deps.db, deps.clock);

  /**
   * Everything a new password ends, in the transaction that sets it, for a reset and a change alike:
   * the user's sessions (but the one making a change), 2FA challenges opened with the old password, and
   * sign-ins on the OAuth provider's pages; with `removeKeys`, every passkey and API key of the user (but
   * system keys) too, which a stolen session could have added. Returns how many of each ended.
   */
  async function endWhatTheOldPasswordOpened(
    userId: string,
    trx: Kysely<Schema>,
    onCommit: (task: () => Promise<void>) => void,
    options: { keepSessionId?: string; removeKeys?: boolean },
  ): Promise<{ sessions: number; oauthTokens: number; removed: Removed }> {
    const sessions = await deps.sessions.revokeAllOfUser(userId, trx, onCommit, options.keepSessionId);
    await deps.twoFactor.closeChallengesOf(userId, trx);
    // Whoever authorized an app with the old password keeps nothing: its refresh token would rotate for good.
    const oauthTokens = await deps.oauth.revokeAllOfUser(userId, trx, onCommit);
    if (!options.removeKeys) return { sessions, oauthTokens, removed: undefined };
    const report = await deps.events.emit('user.passkeys_and_keys_removing', { userId, trx, onCommit });
    return {
      sessions,
      oauthTokens,
      removed: { passkeys: report.passkeys_removed ?? 0, api_keys: report.api_keys_removed ?? 0 },
    };
  }

  /** The audit event's counts of what a new password ended. */
  const endedCounts = (ended: { sessions: number; oauthTokens: number; removed: Removed }) => ({
    sessions_revoked: ended.sessions,
    oauth_tokens_revoked: ended.oauthTokens,
    ...(ended.removed ? { passkeys_removed: ended.removed.passkeys, api_keys_removed: ended.removed.api_keys } : {}),
  });

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
      await deps.audit.record(
        request,
        {
          eventType: 'password_reset_requested',
          userId: account.user_id,
          resourceType: 'user',
          resourceId: account.user_id,
        },
        trx,
      );
      return tokens.issue(
        'password_reset',
        { user_id: account.user_id, token_hash: hashToken(token), expires_at: expiresAt },
        trx,
      );
    });
    try {
      await deps.mailer.send(
        account.email,
        passwordResetMail({ link: mailLink(request, RESET_PASSWORD_PATH, token), expiresAt }),
      );
    } catch (err) {
      await tokens.deleteById(issued.id);
      throw err;
    }
    // Only a mail that went out replaces the older link.
    await tokens.removeOthers('password_reset', account.user_id, issued.id);
  }

  async function newPasswordChecked(password: string): Promise<string> {
    checkedPassword('new_password', password);
    await deps.breachedPasswords.assertNotBreached('new_password', password);
    return password;
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
    async complete(request: FastifyRequest, input: Static<typeof CompleteResetBody>): Promise<void> {
      await deps.botProtection.verify(input.turnstile_token, request.ip);
      const passwordHash = await hashPassword(await newPasswordChecked(input.new_password));
      const { onCommit, committed } = afterCommit();
      const { userId, identifiers, removed } = await deps.db.transaction().execute(async (trx) => {
        const consumed = await tokens.consume('password_reset', hashToken(input.token), trx);
        if (!consumed) throw MailedTokenErrors.invalid();
        const account = await deps.users.setEmailPassword(consumed.user_id, passwordHash, trx);
        if (!account) throw MailedTokenErrors.invalid();
        const ended = await endWhatTheOldPasswordOpened(consumed.user_id, trx, onCommit, {
          removeKeys: input.revoke_passkeys_and_keys,
        });
        await deps.audit.record(
          request,
          {
            eventType: 'password_changed',
            userId: consumed.user_id,
            resourceType: 'user',
            resourceId: consumed.user_id,
            metadata: { via: 'reset', ...endedCounts(ended) },
          },
          trx,
        );
        return {
          userId: consumed.user_id,
          identifiers: [account.email, account.username].filter((id): id is string => Boolean(id)),
          removed: ended.removed,
        };
      });
      await committed();
      await deps.signInThrottle.clear(identifiers, userId);
      await deps.events.emit('user.security_changed', {
        userId,
        kind: 'password_changed',
        ...(removed ? { removed } : {}),
      });
    },

    /**
     * POST /v1/users/me/password: a session only. The current password is checked as a sign-in checks it
     * (a wrong one counts towards the account's lockout, and a locked account is refused); the new one
     * follows the rules of registration. The session asking stays; the user's others end.
     */
    async change(
      request: FastifyRequest,
      caller: Caller,
      input: Static<typeof ChangePasswordBody>,
    ): Promise<{ other_sessions_ended: number }> {
      if (caller.kind !== 'session' || !caller.userId || !caller.sessionId) throw SessionErrors.session_required();
      const { userId, sessionId } = caller;
      if (
        !(await deps.reauthentication.checkCurrentPassword(request, userId, input.current_password, 'password_change'))
      )
        throw PasswordChangeErrors.no_password();
      const passwordHash = await hashPassword(await newPasswordChecked(input.new_password));
      const { onCommit, committed } = afterCommit();
      const ended = await deps.db.transaction().execute(async (trx) => {
        if (!(await deps.users.setEmailPassword(userId, passwordHash, trx))) throw PasswordChangeErrors.no_password();
        const closed = await endWhatTheOldPasswordOpened(userId, trx, onCommit, {
          keepSessionId: sessionId,
          removeKeys: input.revoke_passkeys_and_keys,
        });
        await deps.audit.record(
          request,
          {
            eventType: 'password_changed',
            userId,
            actorId: userId,
            resourceType: 'user',
            resourceId: userId,
            metadata: { via: 'change', ...endedCounts(closed) },
          },
          trx,
        );
        return closed;
      });
      await committed();
      await deps.events.emit('user.security_changed', {
        userId,
        kind: 'password_changed',
        ...(ended.removed ? { removed: ended.removed } : {}),
      });
      return { other_sessions_ended: ended.sessions };
    },
  };
}

export type PasswordResetService = ReturnType<typeof createPasswordResetService>;
