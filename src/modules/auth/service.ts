import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { AuditWriter } from '../../platform/audit.js';
import type { BotProtection } from '../../platform/bot-protection.js';
import type { Caller } from '../../platform/auth/caller.js';
import type { CredentialResolver } from '../../platform/auth/credentials.js';
import { verifyPassword } from '../../platform/auth/passwords.js';
import { hashToken, newToken, sameSecret, SESSION_TOKEN_PREFIX } from '../../platform/auth/tokens.js';
import type { Schema } from '../../platform/db/schema.js';
import { unauthorized } from '../../platform/http/errors.js';
import { DEFAULT_USER_ROLE, SUPER_ADMIN_ROLE, type AccessService } from '../access/service.js';
import { EMAIL_PLATFORM } from '../users/repo.js';
import { normaliseEmail, type NewEmailUser, type UsersService } from '../users/service.js';
import { createSessionsRepo } from './repo.js';

export const SESSION_LIFETIME_MS = 30 * 24 * 3600 * 1000;
const INVALID_CREDENTIALS = 'Invalid credentials';

interface Deps {
  db: Kysely<Schema>;
  botProtection: BotProtection;
  users: UsersService;
  access: AccessService;
  credentials: Pick<CredentialResolver, 'invalidate' | 'invalidateAll'>;
  audit: AuditWriter;
}

/** Email/password sign-in, sessions, and the super-admin bootstrap. */
export function createAuthService(deps: Deps) {
  const sessions = createSessionsRepo(deps.db);

  /** Identifier is matched to a username first, then to an email account. */
  async function findLogin(identifier: string) {
    const byUsername = await deps.users.repo.findByUsername(identifier);
    if (byUsername) return { user: byUsername, account: await deps.users.repo.findEmailAccountOfUser(byUsername.id) };
    const account = await deps.users.repo.findEmailAccount(identifier);
    return { user: account ? await deps.users.repo.findById(account.user_id) : undefined, account };
  }

  return {
    async login(request: FastifyRequest, input: { identifier: string; password: string; turnstile_token?: string }) {
      await deps.botProtection.verify(input.turnstile_token, request.ip);
      const identifier = input.identifier.trim().toLowerCase();
      const { user, account } = await findLogin(identifier);
      // The password is checked (against a dummy hash when there is no account) before anything
      // else, so the response time does not tell whether the account exists.
      const passwordOk = await verifyPassword(account?.password_hash ?? null, input.password);
      if (!user || !account || !passwordOk || !account.platform_enabled) {
        await deps.audit.record(request, {
          eventType: 'login_failed',
          userId: user?.id ?? null,
          resourceType: 'session',
          status: 'failure',
          errorMessage: !user ? 'unknown identifier' : !account?.password_hash ? 'no password sign-in' : !passwordOk ? 'wrong password' : 'email sign-in disabled',
          metadata: { provider: EMAIL_PLATFORM },
        });
        throw unauthorized(INVALID_CREDENTIALS);
      }

      const token = newToken(SESSION_TOKEN_PREFIX);
      const session = await deps.db.transaction().execute(async (trx) => {
        const created = await sessions.create(
          {
            token_hash: hashToken(token),
            user_id: user.id,
            provider: EMAIL_PLATFORM,
            ip_address: request.ip,
            user_agent: request.headers['user-agent'] ?? null,
            expires_at: new Date(Date.now() + SESSION_LIFETIME_MS),
          },
          trx,
        );
        await deps.users.repo.recordLogin(user.id, trx);
        await deps.audit.record(
          request,
          { eventType: 'login', userId: user.id, resourceType: 'session', resourceId: created.id, metadata: { provider: EMAIL_PLATFORM } },
          trx,
        );
        return created;
      });
      return {
        user_id: user.id,
        email: account.email ?? '',
        username: user.username,
        session_token: token,
        session_id: session.id,
        expires_at: session.expires_at,
        provider: EMAIL_PLATFORM,
        requires_2fa: false,
        temp_token: null,
        preferred_locale: user.preferred_locale,
      };
    },

    async logout(request: FastifyRequest, caller: Caller | null) {
      if (caller?.kind !== 'session' || !caller.sessionId) throw unauthorized();
      const tokenHash = await sessions.delete(caller.sessionId);
      if (tokenHash) await deps.credentials.invalidate([tokenHash]);
      await deps.audit.record(request, {
        eventType: 'logout',
        userId: caller.userId,
        resourceType: 'session',
        resourceId: caller.sessionId,
        metadata: { reason: 'user_initiated', session_id: caller.sessionId },
      });
    },

    /** Credential lookup for the resolver: the caller a session token stands for, or null. */
    async lookupSession(tokenHash: string): Promise<Caller | null> {
      const session = await sessions.findLive(tokenHash);
      if (!session || !sameSecret(session.token_hash, tokenHash)) return null;
      const access = await deps.access.accessOfUser(session.user_id);
      return {
        kind: 'session',
        userId: session.user_id,
        apiKeyId: null,
        sessionId: session.id,
        permissions: access.permissions,
        roles: access.roles,
        isSystem: false,
        isSuperAdmin: access.isSuperAdmin,
        provider: session.provider,
        expiresAt: session.expires_at.getTime(),
        ownerPermissions: null,
      };
    },

    /**
     * Makes sure a super admin with this email exists: creates the user (with
     * this password) when missing, otherwise grants the super-admin role and
     * leaves the password alone.
     */
    async ensureSuperAdmin(input: NewEmailUser): Promise<{ userId: string; created: boolean }> {
      const existing = await deps.users.repo.findEmailAccount(normaliseEmail(input.email));
      if (existing) {
        if (await deps.access.grantRoleDirectly(existing.user_id, SUPER_ADMIN_ROLE)) await deps.credentials.invalidateAll();
        return { userId: existing.user_id, created: false };
      }
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

export type AuthService = ReturnType<typeof createAuthService>;
