import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Static } from 'typebox';
import type { AuditWriter } from '../../platform/audit.js';
import type { BotProtection } from '../../platform/bot-protection.js';
import { hashPassword } from '../../platform/auth/passwords.js';
import { hashToken, newToken } from '../../platform/auth/tokens.js';
import type { Schema } from '../../platform/db/schema/index.js';
import { afterCommit, type DomainEventBus } from '../../platform/events.js';

import type { Mailer } from '../../platform/mail/mailer.js';
import { registrationMail } from '../../platform/mail/messages.js';
import { MailedTokenErrors, VERIFY_EMAIL_PATH, mailLink, sendOrUndo } from '../../platform/mail/token-mail.js';
import { DEFAULT_USER_ROLE, type AccessService } from '../access/service.js';
import { EMAIL_PLATFORM } from '../login-providers/service.js';
import { checkedNewEmailUser, type UsersService } from '../users/service.js';
import type { AuthResult, SessionStore } from '../sessions/service.js';
import { createRegistrationRepo } from './repo.js';
import { RegistrationErrors } from './errors.js';
import type { RegisterBody } from './schemas.js';
import type { Clock } from '../../platform/clock.js';
import type { BreachedPasswordCheck } from '../passwords/index.js';

export const REGISTRATION_LIFETIME_MS = 24 * 3600 * 1000;

interface Deps {
  db: Kysely<Schema>;
  clock: Clock;
  botProtection: BotProtection;
  mailer: Mailer;
  users: Pick<UsersService, 'assertEmailUserFree' | 'createWithEmailAccount'>;
  access: Pick<AccessService, 'grantRoleDirectly'>;
  sessions: Pick<SessionStore, 'issue'>;
  audit: AuditWriter;
  /** REGISTRATION_ENABLED and the email platform's own switches (enabled, registration_enabled). */
  registrationOpen: () => Promise<boolean>;
  log: FastifyBaseLogger;
  breachedPasswords: Pick<BreachedPasswordCheck, 'assertNotBreached'>;
  /** `user.registering`: what waits for the confirmed address (group invitations) becomes the new user's. */
  events: Pick<DomainEventBus, 'emit'>;
}

export type RegistrationInput = Static<typeof RegisterBody>;

/**
 * Sign-up by email: a pending registration (24 hours) whose mailed token creates the
 * user, the email account and the default role in one transaction.
 */
export function createRegistrationService(deps: Deps) {
  const tokens = createRegistrationRepo(deps.db, deps.clock);

  /**
   * Turns a live pending registration into a user; the caller decides whether a session follows, and runs
   * `onCommit`'s tasks once its transaction has committed.
   */
  async function completeRegistration(
    request: FastifyRequest,
    tokenHash: string,
    trx: Kysely<Schema>,
    onCommit: (task: () => Promise<void>) => void,
  ) {
    const pending = await tokens.findLivePendingRegistration(tokenHash, trx);
    if (!pending || !(await tokens.deletePendingRegistration(pending.id, trx))) throw MailedTokenErrors.invalid();
    await deps.users.assertEmailUserFree(pending.email, pending.username, trx);
    const user = await deps.users.createWithEmailAccount(trx, {
      username: pending.username,
      email: pending.email,
      passwordHash: pending.password_hash,
    });
    await deps.access.grantRoleDirectly(user.id, DEFAULT_USER_ROLE, trx);
    await deps.audit.record(
      request,
      {
        eventType: 'user_created',
        userId: user.id,
        resourceType: 'user',
        resourceId: user.id,
        metadata: { provider: EMAIL_PLATFORM },
      },
      trx,
    );
    await deps.events.emit('user.registering', { userId: user.id, email: pending.email, trx, onCommit });
    return { user, email: pending.email };
  }

  return {
    purgeExpired: () => tokens.purgeExpiredRegistrations(),

    async register(request: FastifyRequest, input: RegistrationInput): Promise<{ message: string; expires_at: Date }> {
      await deps.botProtection.verify(input.turnstile_token, request.ip);
      if (!(await deps.registrationOpen())) throw RegistrationErrors.disabled();
      const { email, username } = checkedNewEmailUser(input);
      await deps.breachedPasswords.assertNotBreached('password', input.password);
      const token = newToken('');
      const passwordHash = await hashPassword(input.password);
      const pending = await deps.db.transaction().execute(async (trx) => {
        await deps.users.assertEmailUserFree(email, username, trx);
        await tokens.deleteExpiredRegistrations(email, username, trx);
        const holder = await tokens.pendingRegistrationHolds(email, username, trx);
        if (holder)
          throw RegistrationErrors.pending(
            `A registration for this ${holder.email ? 'email' : 'username'} is already waiting for confirmation`,
          );
        return tokens.insertPendingRegistration(
          {
            email,
            username,
            password_hash: passwordHash,
            token_hash: hashToken(token),
            expires_at: new Date(deps.clock.now().getTime() + REGISTRATION_LIFETIME_MS),
          },
          trx,
        );
      });

      const link = mailLink(request, VERIFY_EMAIL_PATH, token);
      await sendOrUndo(deps, email, registrationMail({ link, expiresAt: pending.expires_at }, username), () =>
        tokens.deletePendingRegistration(pending.id),
      );
      return {
        message: 'Registration started; check your email to confirm your address',
        expires_at: pending.expires_at,
      };
    },

    /** POST /v1/auth/register/verify: creates the account and signs the new user in. */
    async verifyAndSignIn(request: FastifyRequest, token: string): Promise<AuthResult> {
      const { onCommit, committed } = afterCommit();
      const signedIn = await deps.db.transaction().execute(async (trx) => {
        const { user, email } = await completeRegistration(request, hashToken(token), trx, onCommit);
        return deps.sessions.issue(
          request,
          { user, email, provider: EMAIL_PLATFORM, auditEvent: 'session_created' },
          trx,
        );
      });
      await committed();
      return signedIn;
    },

    /** The verify-email path for registration tokens: the account is created, no session. Undefined when the token is not one. */
    async verifyWithoutSession(request: FastifyRequest, token: string): Promise<{ userId: string } | undefined> {
      const tokenHash = hashToken(token);
      if (!(await tokens.findLivePendingRegistration(tokenHash))) return undefined;
      const { onCommit, committed } = afterCommit();
      const { user } = await deps.db
        .transaction()
        .execute((trx) => completeRegistration(request, tokenHash, trx, onCommit));
      await committed();
      return { userId: user.id };
    },
  };
}

export type RegistrationService = ReturnType<typeof createRegistrationService>;
