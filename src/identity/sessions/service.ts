import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Static } from 'typebox';
import { auditSourceOf, type AuditWriter } from '../../platform/audit.js';
import type { Caller } from '../../platform/auth/caller.js';
import type { CredentialResolver } from '../../platform/auth/credentials.js';
import { requireOwnAccount } from '../../platform/auth/hooks.js';
import { hashToken } from '../../platform/auth/tokens.js';
import type { Schema } from '../../platform/db/schema/index.js';

import { parseUserAgent } from '../../platform/http/user-agent.js';
import { EMAIL_PLATFORM } from '../login-providers/service.js';
import { ActivityRecorder } from './activity.js';
import { createSessionsRepo } from './repo.js';
import type { CreateSessionBody, SessionEndReason } from './schemas.js';
import { SessionErrors } from './errors.js';
import { UserErrors } from '../users/errors.js';

import type { SessionStore } from './store.js';
import type { Clock } from '../../platform/clock.js';

export { createSessionStore, SESSION_LIFETIME_MS, type AuthResult, type SessionStore } from './store.js';

/** What a user's open apps are told when they must sign out. */
export type SignOutNotice = { type: 'forceLogout'; reason: string } | { type: 'appLogout'; clientId: string };

/** Delivers a notice to every open WebSocket connection of the user, on every node (the realtime module). */
export type SignOutNotifier = (userId: string, notice: SignOutNotice) => Promise<void>;

/**
 * Revokes a user's OAuth access and refresh tokens (of one client, or of all when clientId is
 * absent) and returns how many. Consent is kept.
 */
export type OAuthTokenRevoker = (userId: string, clientId?: string) => Promise<number>;

/**
 * Who may sign the user out of their apps (logout-everywhere, logout-app, on REST and GraphQL): the person's
 * session, an app's own token (an app signs its user out), or a key granted connected_apps:sign_out.
 */
export const SIGN_OUT_OF_APPS = requireOwnAccount('connected_apps:sign_out', { oauthTokens: true });

export const DEFAULT_LOGOUT_EVERYWHERE_REASON = 'sso_logout';
const SOURCE_SERVICE_MAX = 100;

interface Deps {
  db: Kysely<Schema>;
  clock: Clock;
  notifySignOut: SignOutNotifier;
  credentials: Pick<CredentialResolver, 'invalidate'>;
  audit: AuditWriter;
  log: FastifyBaseLogger;
  /** The session rows (this module's store). */
  store: Pick<SessionStore, 'create' | 'findLive'>;
  /** The OAuth provider's (the sessions module does not own OAuth tokens). */
  revokeOAuthTokens: OAuthTokenRevoker;
  /** The login providers' display name of a provider slug. */
  platformName: (slug: string) => Promise<string>;
  /** A user that is not deleted, with the slug of their primary sign-in platform (null without one). */
  userWithPrimaryProvider: (userId: string) => Promise<{ id: string; provider: string | null } | undefined>;
}

/** The caller's own session, or 403 for any other credential (the routes need to know the current session). */
function sessionOf(caller: Caller): { userId: string; sessionId: string } {
  if (caller.kind !== 'session' || !caller.userId || !caller.sessionId) throw SessionErrors.session_required();
  return { userId: caller.userId, sessionId: caller.sessionId };
}

function userOf(caller: Caller): string {
  if (!caller.userId) throw SessionErrors.user_required();
  return caller.userId;
}

/** The calling app named by X-Source-Service, if any. */
function sourceServiceOf(request: FastifyRequest): string | null {
  const header = request.headers['x-source-service'];
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  return value ? value.slice(0, SOURCE_SERVICE_MAX) : null;
}

/** A user's active sessions, the internal session endpoints for sign-in apps, and sign-out broadcasts. */
export function createSessionsService(deps: Deps) {
  const repo = createSessionsRepo(deps.db, deps.clock);
  const activity = new ActivityRecorder((entries) => repo.recordActivity(entries), deps.log);
  const { revokeOAuthTokens } = deps;

  async function broadcast(userId: string, notice: SignOutNotice): Promise<void> {
    try {
      await deps.notifySignOut(userId, notice);
    } catch (err) {
      // The revocation and its audit event stand; only the live notification of open apps is lost.
      deps.log.warn({ err, type: notice.type }, 'could not broadcast a sign-out');
    }
  }

  /** A user's live sessions, most recently active first; `is_current` marks `sessionId`. */
  async function liveSessionsOf(userId: string, sessionId: string | null) {
    const rows = await repo.listLiveOfUser(userId);
    const providers = [...new Set(rows.map((row) => row.provider))];
    const names = new Map(
      await Promise.all(providers.map(async (slug) => [slug, await deps.platformName(slug)] as const)),
    );
    const sessions = rows.map((row) => {
      const pending = activity.pendingFor(row.id);
      const agent = parseUserAgent(row.user_agent ?? '');
      return {
        id: row.id,
        ip_address: row.ip_address ?? '',
        user_agent: row.user_agent ?? '',
        device_type: agent.deviceType,
        browser_name: agent.browser ?? '',
        os_name: agent.os ?? '',
        provider: row.provider,
        provider_name: names.get(row.provider) ?? row.provider,
        last_activity_at: pending && pending > row.last_activity_at ? pending : row.last_activity_at,
        created_at: row.created_at,
        expires_at: row.expires_at,
        is_current: row.id === sessionId,
      };
    });
    // Not-yet-written activity can change the order the database returned.
    sessions.sort(
      (a, b) =>
        b.last_activity_at.getTime() - a.last_activity_at.getTime() || b.created_at.getTime() - a.created_at.getTime(),
    );
    return sessions;
  }

  const internalShape = (
    session: { id: string; expires_at: Date; created_at: Date },
    token: string,
    userId: string,
  ) => ({
    id: session.id,
    sessionToken: token,
    userId,
    expires: session.expires_at,
    created_at: session.created_at,
  });

  return {
    purgeExpired: () => repo.deleteExpired(),

    activity,

    /** Called for every request made with a session token: remembered in memory, written in batches. */
    noteActivity(sessionId: string): void {
      activity.note(sessionId, deps.clock.now());
    },

    async listMine(caller: Caller) {
      const { userId, sessionId } = sessionOf(caller);
      return { sessions: await liveSessionsOf(userId, sessionId), currentSessionId: sessionId };
    },

    liveSessionsOf,

    /** 'current' when asked to end the session making the request (that is POST /v1/auth/logout). */
    async revokeMine(request: FastifyRequest, caller: Caller, targetId: string): Promise<'revoked' | 'current'> {
      const { userId, sessionId } = sessionOf(caller);
      if (targetId.toLowerCase() === sessionId) return 'current';
      // The deletion and its audit event commit together; the cache is dropped once they have.
      const tokenHash = await deps.db.transaction().execute(async (trx) => {
        const deleted = await repo.deleteOfUser(userId, targetId, trx);
        if (!deleted) throw SessionErrors.not_found();
        await deps.audit.record(
          request,
          {
            eventType: 'session_revoked',
            userId,
            actorId: userId,
            resourceType: 'session',
            resourceId: targetId,
            metadata: { session_id: targetId, reason: 'user_revoked' },
          },
          trx,
        );
        return deleted;
      });
      await deps.credentials.invalidate([tokenHash]);
      return 'revoked';
    },

    async revokeMyOthers(request: FastifyRequest, caller: Caller): Promise<number> {
      const { userId, sessionId } = sessionOf(caller);
      const revoked = await deps.db.transaction().execute(async (trx) => {
        const deleted = await repo.deleteOthersOfUser(userId, sessionId, trx);
        if (deleted.length === 0) return deleted;
        await deps.audit.record(
          request,
          {
            eventType: 'session_revoked',
            userId,
            actorId: userId,
            resourceType: 'session',
            metadata: {
              reason: 'user_revoked_others',
              kept_session_id: sessionId,
              session_ids: deleted.map((session) => session.id),
            },
          },
          trx,
        );
        return deleted;
      });
      if (revoked.length > 0) await deps.credentials.invalidate(revoked.map((session) => session.token_hash));
      return revoked.length;
    },

    /** POST /v1/sessions: a session a sign-in app created for a user it authenticated itself. */
    async createForApp(request: FastifyRequest, input: Static<typeof CreateSessionBody>) {
      const expires = new Date(input.expires);
      if (!(expires.getTime() > deps.clock.now().getTime())) throw SessionErrors.expires_in_past();
      const user = await deps.userWithPrimaryProvider(input.userId);
      if (!user) throw UserErrors.not_found();
      const app = sourceServiceOf(request);
      const session = await deps.db.transaction().execute(async (trx) => {
        // IP and agent are the request's: the app may forward the person's (X-Forwarded-For with TRUST_PROXY).
        const created = await deps.store.create(
          request,
          { userId: user.id, provider: user.provider ?? EMAIL_PLATFORM, expiresAt: expires },
          trx,
        );
        await deps.audit.record(
          request,
          {
            eventType: 'session_created',
            userId: user.id,
            resourceType: 'session',
            resourceId: created.id,
            metadata: { app },
            sourceService: auditSourceOf(app),
          },
          trx,
        );
        return created;
      });
      return internalShape(session, session.token, user.id);
    },

    async getForApp(token: string) {
      const session = await deps.store.findLive(hashToken(token));
      if (!session) throw SessionErrors.not_found();
      // An app looks its session up on each page view of the person: that is activity too.
      activity.note(session.id, deps.clock.now());
      return internalShape(session, token, session.user_id);
    },

    /** DELETE /v1/sessions/{token}: idempotent; the logout event is written only when a session ended. */
    async endForApp(request: FastifyRequest, token: string, reason: SessionEndReason): Promise<void> {
      const tokenHash = hashToken(token);
      const app = sourceServiceOf(request);
      const ended = await deps.db.transaction().execute(async (trx) => {
        const deleted = await repo.deleteByHash(tokenHash, trx);
        if (!deleted) return undefined;
        await deps.audit.record(
          request,
          {
            eventType: 'logout',
            userId: deleted.user_id,
            resourceType: 'session',
            resourceId: deleted.id,
            metadata: { reason, session_id: deleted.id, app },
            sourceService: auditSourceOf(app),
          },
          trx,
        );
        return deleted;
      });
      if (ended) await deps.credentials.invalidate([tokenHash]);
    },

    /** Tells the user's open apps, on every node, to sign out now (a ban, a deletion), with the reason. */
    forceLogout: (userId: string, reason: string) => broadcast(userId, { type: 'forceLogout', reason }),

    /**
     * Signs the user out of every client app: their OAuth tokens are revoked (consent is kept) and
     * open apps are told over the WebSocket. The user's sessions with this service are not ended.
     */
    async logoutEverywhere(
      request: FastifyRequest,
      caller: Caller,
      reason = DEFAULT_LOGOUT_EVERYWHERE_REASON,
    ): Promise<void> {
      const userId = userOf(caller);
      await revokeOAuthTokens(userId);
      await deps.audit.record(request, {
        eventType: 'logout',
        userId,
        actorId: userId,
        resourceType: 'user',
        resourceId: userId,
        metadata: { reason },
      });
      await broadcast(userId, { type: 'forceLogout', reason });
    },

    /** Signs the user out of one client app: its OAuth tokens for them are revoked, consent kept. */
    async logoutApp(request: FastifyRequest, caller: Caller, clientId: string): Promise<void> {
      const userId = userOf(caller);
      await revokeOAuthTokens(userId, clientId);
      await deps.audit.record(request, {
        eventType: 'logout',
        userId,
        actorId: userId,
        resourceType: 'oauth_client',
        resourceId: clientId,
        metadata: { client_id: clientId },
      });
      await broadcast(userId, { type: 'appLogout', clientId });
    },
  };
}

export type SessionsService = ReturnType<typeof createSessionsService>;
