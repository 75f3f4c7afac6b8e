import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { AuditWriter } from '../../platform/audit.js';
import type { BotProtection } from '../../platform/bot-protection.js';
import type { Caller } from '../../platform/auth/caller.js';
import type { CredentialResolver } from '../../platform/auth/credentials.js';
import { verifyPassword } from '../../platform/auth/passwords.js';
import { hashToken, newToken, sameSecret, SESSION_TOKEN_PREFIX } from '../../platform/auth/tokens.js';
import type { Schema } from '../../platform/db/schema/index.js';
import { conflict, unauthorized } from '../../platform/http/errors.js';
import { DEFAULT_USER_ROLE, SUPER_ADMIN_ROLE, type AccessService } from '../access/service.js';
import { EMAIL_PLATFORM } from '../platforms/service.js';
import { normaliseEmail, type NewEmailUser, type UsersService } from '../users/service.js';
import { createSessionsRepo } from './repo.js';
import type { SignInThrottle } from '../sign-in-throttle/service.js';

export interface AuthResult {
  user_id: string;
  email: string;
  username: string;
  session_token?: string | null;
  session_id?: string | null;
  expires_at?: Date | null;
  provider: string | null;
  requires_2fa: boolean;
  temp_token?: string | null;
  preferred_locale: string | null;
}

export const SESSION_LIFETIME_MS = 30 * 24 * 3600 * 1000;
const INVALID_CREDENTIALS = 'Invalid credentials';

interface Deps {
  db: Kysely<Schema>;
  botProtection: BotProtection;
  users: UsersService;
  access: AccessService;
  credentials: Pick<CredentialResolver, 'invalidate' | 'invalidateAll'>;
  audit: AuditWriter;
  signInThrottle: Pick<SignInThrottle, 'ensureAllowed' | 'recordFailure'>;
  /** Late-bound (the two-factor service needs this one): opens a 2FA login challenge when the user has 2FA on. */
  twoFactor: { startLoginChallenge(userId: string, provider: string): Promise<string | null> };
}

/** Email/password sign-in, sessions, and the super-admin bootstrap. */
export function createAuthService(deps: Deps) {
  const sessions = createSessionsRepo(deps.db);

  /** Identifier is matched to a username first, then to an email account. */
  async function findLogin(identifier: string) {
    const byUsername = await deps.users.findByUsername(identifier);
    if (byUsername) return { user: byUsername, account: await deps.users.findEmailAccountOfUser(byUsername.id) };
    const account = await deps.users.findEmailAccount(identifier);
    return { user: account ? await deps.users.findById(account.user_id) : undefined, account };
  }

  /**
   * Starts a 30-day session for a signed-in user and records `auditEvent` with it; returns the
   * AuthResponse. Runs in the caller's transaction so the session and its audit event commit together.
   */
  /**
   * A new session row for the request's client: a fresh ses_ token, stored only as its hash. Every way
   * of signing in goes through here (login, 2FA, registration, sessions made by sign-in apps).
   */
  async function createSession(request: FastifyRequest, input: { userId: string; provider: string; expiresAt: Date }, trx: Kysely<Schema>) {
    const token = newToken(SESSION_TOKEN_PREFIX);
    const session = await sessions.create(
      {
        token_hash: hashToken(token),
        user_id: input.userId,
        provider: input.provider,
        ip_address: request.ip,
        user_agent: request.headers['user-agent'] ?? null,
        expires_at: input.expiresAt,
      },
      trx,
    );
    return { ...session, token };
  }

  async function issueSession(
    request: FastifyRequest,
    input: { user: { id: string; username: string; preferred_locale: string | null }; email: string; provider: string; auditEvent: string },
    trx: Kysely<Schema>,
  ): Promise<AuthResult> {
    const session = await createSession(request, { userId: input.user.id, provider: input.provider, expiresAt: new Date(Date.now() + SESSION_LIFETIME_MS) }, trx);
    await deps.audit.record(
      request,
      { eventType: input.auditEvent, userId: input.user.id, resourceType: 'session', resourceId: session.id, metadata: { provider: input.provider } },
      trx,
    );
    return {
      user_id: input.user.id,
      email: input.email,
      username: input.user.username,
      session_token: session.token,
      session_id: session.id,
      expires_at: session.expires_at,
      provider: input.provider,
      requires_2fa: false,
      temp_token: null,
      preferred_locale: input.user.preferred_locale,
    };
  }

  return {
    sessionHashesOf: (userId: string) => sessions.tokenHashesOfUser(userId),
    /** An unexpired session of a user that is not deleted, by token hash. */
    liveSession: (tokenHash: string) => sessions.findLive(tokenHash),
    createSession,
    issueSession,

    /**
     * Ends every session of the user (password reset, deletion, ban): deletes them in the caller's
     * transaction; the returned function drops them from the credential cache once that committed.
     */
    async revokeAllSessions(userId: string, trx: Kysely<Schema>): Promise<{ count: number; invalidate: () => Promise<void> }> {
      const hashes = await sessions.deleteAllOfUser(userId, trx);
      return { count: hashes.length, invalidate: () => (hashes.length ? deps.credentials.invalidate(hashes) : Promise.resolve()) };
    },

    async login(request: FastifyRequest, input: { identifier: string; password: string; turnstile_token?: string }): Promise<AuthResult> {
      await deps.botProtection.verify(input.turnstile_token, request.ip);
      const identifier = input.identifier.trim().toLowerCase();
      await deps.signInThrottle.ensureAllowed(identifier, request.ip);
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
        await deps.signInThrottle.recordFailure(identifier, request.ip);
        throw unauthorized(INVALID_CREDENTIALS);
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

      return deps.db.transaction().execute(async (trx) => {
        await deps.users.recordLogin(user.id, trx);
        return issueSession(request, { user, email: account.email ?? '', provider: EMAIL_PLATFORM, auditEvent: 'login' }, trx);
      });
    },

    async logout(request: FastifyRequest, caller: Caller | null) {
      if (caller?.kind !== 'session' || !caller.sessionId) throw unauthorized();
      const sessionId = caller.sessionId;
      const tokenHash = await deps.db.transaction().execute(async (trx) => {
        const deleted = await sessions.delete(sessionId, trx);
        await deps.audit.record(
          request,
          { eventType: 'logout', userId: caller.userId, resourceType: 'session', resourceId: sessionId, metadata: { reason: 'user_initiated', session_id: sessionId } },
          trx,
        );
        return deleted;
      });
      if (tokenHash) await deps.credentials.invalidate([tokenHash]);
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
      const email = normaliseEmail(input.email);
      const existing = await deps.users.findEmailAccount(email);
      if (existing) {
        if (await deps.access.grantRoleDirectly(existing.user_id, SUPER_ADMIN_ROLE)) await deps.access.invalidateUser(existing.user_id);
        return { userId: existing.user_id, created: false };
      }
      if (await deps.users.emailAccountExists(email)) throw conflict('This email belongs to a deleted user; choose another address');
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
