import { afterCommit, signInOf, type DomainEventBus } from '../../platform/events.js';
import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { AuditWriter } from '../../platform/audit.js';
import type { BotProtection } from '../../platform/bot-protection.js';
import type { Caller } from '../../platform/auth/caller.js';
import type { CredentialResolver } from '../../platform/auth/credentials.js';
import { verifyPassword } from '../../platform/auth/passwords.js';
import { hashToken, newToken, sameSecret, SESSION_TOKEN_PREFIX } from '../../platform/auth/tokens.js';
import type { Schema } from '../../platform/db/schema/index.js';
import { AuthErrors } from '../../platform/http/errors.js';
import { DEFAULT_USER_ROLE, SUPER_ADMIN_ROLE, type AccessService } from '../access/service.js';
import { EMAIL_PLATFORM } from '../login-providers/service.js';
import { normaliseEmail, type NewEmailUser, type UsersService } from '../users/service.js';
import type { AuthResult, SessionStore } from '../sessions/service.js';
import type { SignInThrottle } from '../sign-in-throttle/service.js';
import type { TwoFactorService } from '../two-factor/service.js';
import { bannedError } from '../bans/errors.js';
import type { BansService } from '../bans/service.js';
import { LoginErrors } from './errors.js';
import { UserErrors } from '../users/errors.js';
import type { Static } from 'typebox';
import type { LoginBody } from './schemas.js';

export type { AuthResult } from '../sessions/service.js';

interface Deps {
  db: Kysely<Schema>;
  botProtection: BotProtection;
  users: Pick<
    UsersService,
    'createEmailUser' | 'emailAccountExists' | 'findEmailAccount' | 'findPasswordLogin' | 'recordLogin'
  >;
  access: AccessService;
  credentials: Pick<CredentialResolver, 'invalidate' | 'invalidateAll'>;
  sessions: Pick<SessionStore, 'issue' | 'delete' | 'revokeAllOfUser'>;
  audit: AuditWriter;
  signInThrottle: Pick<SignInThrottle, 'claim'>;
  bans: Pick<BansService, 'inForce'>;
  /** Opens a 2FA login challenge when the user has 2FA on (the two-factor module's). */
  twoFactor: Pick<TwoFactorService, 'startLoginChallenge'>;
  /** Sign-ins and changes the user is told of by mail (the security notices react). */
  events: Pick<DomainEventBus, 'emit'>;
}

/** Email/password sign-in, sessions, and the super-admin bootstrap. */
export function createSignInService(deps: Deps) {
  return {
    /** `withoutSession`: the OAuth sign-in page, which needs the user, not a session token. */
    async login(
      request: FastifyRequest,
      input: Static<typeof LoginBody>,
      options: { withoutSession?: boolean } = {},
    ): Promise<AuthResult> {
      await deps.botProtection.verify(input.turnstile_token, request.ip);
      const identifier = input.identifier.trim().toLowerCase();
      const { user, account } = await deps.users.findPasswordLogin(identifier);
      // Claimed before the password is checked, so a burst of guesses cannot outrun the lockout; counted on
      // the account too, so its username and its email do not each get their own guesses.
      const attempt = await deps.signInThrottle.claim({ identifier, userId: user?.id }, request.ip);
      // The password is checked (against a dummy hash when there is no account) before anything
      // else, so the response time does not tell whether the account exists.
      const passwordOk = await verifyPassword(account?.password_hash ?? null, input.password);
      if (!user || !account || !passwordOk || !account.platform_enabled) {
        await deps.audit.record(request, {
          eventType: 'login_failed',
          userId: user?.id ?? null,
          resourceType: 'session',
          status: 'failure',
          errorMessage: !user
            ? 'unknown identifier'
            : !account?.password_hash
              ? 'no password sign-in'
              : !passwordOk
                ? 'wrong password'
                : 'email sign-in disabled',
          metadata: { provider: EMAIL_PLATFORM },
        });
        await attempt.failed();
        throw LoginErrors.invalid_credentials();
      }
      await attempt.succeeded();

      // A banned user learns so (and until when) only after giving the right password.
      const ban = await deps.bans.inForce(user.id);
      if (ban) {
        await deps.audit.record(request, {
          eventType: 'login_failed',
          userId: user.id,
          resourceType: 'session',
          status: 'failure',
          errorMessage: 'banned',
          metadata: { provider: EMAIL_PLATFORM, ban_id: ban.id },
        });
        throw bannedError(ban);
      }

      // With 2FA on, the password only earns a temporary token; POST /v1/auth/2fa/verify makes the session.
      const tempToken = await deps.twoFactor.startLoginChallenge(user.id, EMAIL_PLATFORM);
      if (tempToken) {
        return {
          user_id: user.id,
          email: account.email ?? '',
          username: user.username,
          provider: EMAIL_PLATFORM,
          requires_2fa: true,
          temp_token: tempToken,
          preferred_locale: user.preferred_locale,
        };
      }

      const result = await deps.db.transaction().execute(async (trx) => {
        await deps.users.recordLogin(user.id, trx);
        return deps.sessions.issue(
          request,
          {
            user,
            email: account.email ?? '',
            provider: EMAIL_PLATFORM,
            auditEvent: 'login',
            withoutSession: options.withoutSession,
          },
          trx,
        );
      });
      await deps.events.emit('user.signed_in', signInOf(request, user.id));
      return result;
    },

    async logout(request: FastifyRequest, caller: Caller | null) {
      if (caller?.kind !== 'session' || !caller.sessionId) throw AuthErrors.unauthorized();
      const sessionId = caller.sessionId;
      const tokenHash = await deps.db.transaction().execute(async (trx) => {
        const deleted = await deps.sessions.delete(sessionId, trx);
        await deps.audit.record(
          request,
          {
            eventType: 'logout',
            userId: caller.userId,
            resourceType: 'session',
            resourceId: sessionId,
            metadata: { reason: 'user_initiated', session_id: sessionId },
          },
          trx,
        );
        return deleted;
      });
      if (tokenHash) await deps.credentials.invalidate([tokenHash]);
    },

    /** GraphQL `logout`: ends every session of the calling session's user (the spec's "deletes all sessions"). */
    async logoutAllSessions(request: FastifyRequest, caller: Caller | null): Promise<number> {
      if (caller?.kind !== 'session' || !caller.userId) throw AuthErrors.unauthorized();
      const userId = caller.userId;
      const { onCommit, committed } = afterCommit();
      const ended = await deps.db.transaction().execute(async (trx) => {
        const count = await deps.sessions.revokeAllOfUser(userId, trx, onCommit);
        await deps.audit.record(
          request,
          {
            eventType: 'logout',
            userId,
            resourceType: 'user',
            resourceId: userId,
            metadata: { reason: 'user_initiated', sessions_ended: count },
          },
          trx,
        );
        return count;
      });
      await committed();
      return ended;
    },

    /**
     * Makes sure a super admin with this email exists: creates the user (with
     * this password) when missing, otherwise grants the super-admin role and
     * leaves the password alone.
     */
    async ensureSuperAdmin(input: NewEmailUser): Promise<{ userId: string; created: boolean }> {
      const email = normaliseEmail(input.email);
      const existing = await deps.users.findEmailAccount(email);
      if (existing) {
        if (await deps.access.grantRoleDirectly(existing.user_id, SUPER_ADMIN_ROLE))
          await deps.access.invalidateUser(existing.user_id);
        return { userId: existing.user_id, created: false };
      }
      if (await deps.users.emailAccountExists(email)) throw UserErrors.email_of_deleted_user();
      const user = await deps.db.transaction().execute(async (trx) => {
        const created = await deps.users.createEmailUser(trx, input);
        await deps.access.grantRoleDirectly(created.id, SUPER_ADMIN_ROLE, trx);
        await deps.access.grantRoleDirectly(created.id, DEFAULT_USER_ROLE, trx);
        return created;
      });
      return { userId: user.id, created: true };
    },
  };
}

export type SignInService = ReturnType<typeof createSignInService>;
