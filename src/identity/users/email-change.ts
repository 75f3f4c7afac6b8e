import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { AuditWriter } from '../../platform/audit.js';
import { hashToken, newToken } from '../../platform/auth/tokens.js';
import type { Schema } from '../../platform/db/schema/index.js';

import type { Mailer } from '../../platform/mail/mailer.js';
import { emailChangeMail } from '../../platform/mail/messages.js';
import { MailedTokenErrors, VERIFY_EMAIL_PATH, mailLink, sendOrUndo } from '../../platform/mail/token-mail.js';
import { createAccountTokens } from '../account-tokens/service.js';
import type { UsersRepo } from './repo.js';
import { EmailChangeErrors, UserErrors } from './errors.js';
import type { Clock } from '../../platform/clock.js';
import type { DomainEventBus } from '../../platform/events.js';

export const EMAIL_CHANGE_LIFETIME_MS = 24 * 3600 * 1000;

interface Deps {
  db: Kysely<Schema>;
  clock: Clock;
  repo: UsersRepo;
  mailer: Pick<Mailer, 'send'>;
  audit: AuditWriter;
  log: FastifyBaseLogger;
  /** The old address hears of a change (the security notices react). */
  events: Pick<DomainEventBus, 'emit'>;
}

/**
 * Changing the address of a user's email/password account: a token mailed to the new
 * address (24 hours) proves the user owns it before anything changes.
 */
export function createEmailChangeService(deps: Deps) {
  const { repo } = deps;
  const tokens = createAccountTokens(deps.db, deps.clock);

  async function requireUser(userId: string) {
    const user = await repo.findById(userId);
    if (!user) throw UserErrors.not_found();
    return user;
  }

  return {
    async request(
      request: FastifyRequest,
      userId: string,
      email: string,
    ): Promise<{ message: string; expires_at: Date }> {
      const user = await requireUser(userId);
      const account = await repo.findEmailAccountOfUser(userId);
      if (!account) throw EmailChangeErrors.no_email_account();
      if (account.email === email) throw EmailChangeErrors.same_address();
      const token = newToken('');
      const pending = await deps.db.transaction().execute(async (trx) => {
        if (await repo.emailAccountExists(email, trx)) throw UserErrors.email_in_use();
        return tokens.issue(
          'email_change',
          {
            user_id: userId,
            email,
            token_hash: hashToken(token),
            expires_at: new Date(deps.clock.now().getTime() + EMAIL_CHANGE_LIFETIME_MS),
          },
          trx,
        );
      });

      const link = mailLink(request, VERIFY_EMAIL_PATH, token);
      await sendOrUndo(deps, email, emailChangeMail({ link, expiresAt: pending.expires_at }, user.username), () =>
        tokens.deleteById(pending.id),
      );
      await tokens.removeOthers('email_change', userId, pending.id);
      return {
        message: 'A verification link was sent to the new address; the change takes effect when it is opened',
        expires_at: pending.expires_at,
      };
    },

    /** Applies the change a token stands for; 400 when the token is unknown, expired or used, 409 when the address was taken meanwhile. */
    async complete(request: FastifyRequest, token: string): Promise<{ userId: string }> {
      const changed = await deps.db.transaction().execute(async (trx) => {
        const row = await tokens.consume('email_change', hashToken(token), trx);
        const user = row && (await repo.findById(row.user_id, trx));
        const account = user && (await repo.findEmailAccountOfUser(user.id, trx));
        if (!row?.email || !user || !account) throw MailedTokenErrors.invalid();
        if (account.email !== row.email) {
          if (await repo.emailAccountExists(row.email, trx)) throw UserErrors.email_in_use();
          await repo.setEmailAccountAddress(account.id, row.email, trx);
          await tokens.removeAllOf(user.id, ['password_reset'], trx);
        }
        await deps.audit.record(
          request,
          {
            eventType: 'user_updated',
            userId: user.id,
            resourceType: 'user',
            resourceId: user.id,
            metadata: { fields: ['email'], via: 'email_change' },
          },
          trx,
        );
        return { userId: user.id, username: user.username, oldEmail: account.email, newEmail: row.email };
      });
      if (changed.oldEmail && changed.oldEmail !== changed.newEmail) {
        await deps.events.emit('user.security_changed', {
          userId: changed.userId,
          kind: 'email_changed',
          oldEmail: changed.oldEmail,
          newEmail: changed.newEmail,
        });
      }
      return { userId: changed.userId };
    },

    async pending(userId: string) {
      await requireUser(userId);
      const row = await tokens.pendingOf('email_change', userId);
      return { pending: Boolean(row), new_email: row?.email ?? null, expires_at: row?.expires_at ?? null };
    },

    async cancel(userId: string) {
      await requireUser(userId);
      if ((await tokens.removePending('email_change', userId)) === 0) throw EmailChangeErrors.none_pending();
      return { success: true, message: 'The pending email change was cancelled' };
    },

    /**
     * Sets the address without verification (administrators only; the caller checked that); in the
     * caller's transaction. Returns the old address when it changed, else null.
     */
    async changeDirectly(userId: string, email: string, trx: Kysely<Schema>): Promise<string | null> {
      const account = await repo.findEmailAccountOfUser(userId, trx);
      if (!account) throw UserErrors.no_email_account();
      if (account.email === email) return null;
      if (await repo.emailAccountExists(email, trx)) throw UserErrors.email_in_use();
      await repo.setEmailAccountAddress(account.id, email, trx);
      // A pending change is stale now, and a reset link mailed to the old address must not work.
      await tokens.removeAllOf(userId, ['email_change', 'password_reset'], trx);
      return account.email ?? '';
    },

    /** A deleted user's mailed links all stop working. */
    removeAllTokensOf: (userId: string, trx: Kysely<Schema>) =>
      tokens.removeAllOf(userId, ['email_change', 'email_link', 'password_reset'], trx),
  };
}

export type EmailChangeService = ReturnType<typeof createEmailChangeService>;
