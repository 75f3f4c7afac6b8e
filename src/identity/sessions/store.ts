import type { FastifyRequest } from 'fastify';
import { sql, type Kysely } from 'kysely';
import type { AuditEventType, AuditWriter } from '../../platform/audit.js';
import type { Caller } from '../../platform/auth/caller.js';
import type { CredentialResolver } from '../../platform/auth/credentials.js';
import { hashToken, newToken, sameSecret, SESSION_TOKEN_PREFIX } from '../../platform/auth/tokens.js';
import type { Clock } from '../../platform/clock.js';
import type { Schema } from '../../platform/db/schema/index.js';
import { banInForce } from '../bans/index.js';

export const SESSION_LIFETIME_MS = 30 * 24 * 3600 * 1000;

/** The AuthResponse of the interface: a session, or (requires_2fa) a temporary token. */
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

export interface UserAccess {
  permissions: string[];
  roles: string[];
  isSuperAdmin: boolean;
}

interface Deps {
  db: Kysely<Schema>;
  clock: Clock;
  credentials: Pick<CredentialResolver, 'invalidate'>;
  audit: AuditWriter;
  /** What the user may do now (the access module's). */
  accessOfUser: (userId: string) => Promise<UserAccess>;
  /** Throws while a ban of the user is in force (the bans module's): no session is ever made for them. */
  assertNotBanned: (userId: string, executor: Kysely<Schema>) => Promise<void>;
}

/**
 * The session rows: the one place that creates, finds and deletes them. Sign-in (sign-in, two-factor,
 * registration) creates sessions here; the sessions service lists and revokes them; the credential
 * resolver looks them up.
 */
export function createSessionStore(deps: Deps) {
  const { db } = deps;

  /** An unexpired session of a user that is neither deleted nor banned, by token hash. */
  const findLive = (tokenHash: string) =>
    db
      .selectFrom('sessions as s')
      .innerJoin('users as u', 'u.id', 's.user_id')
      .select(['s.id', 's.token_hash', 's.user_id', 's.provider', 's.expires_at', 's.created_at'])
      .where('s.token_hash', '=', tokenHash)
      .where('s.expires_at', '>', deps.clock.now())
      .where('u.deleted_at', 'is', null)
      // Sessions end when a ban starts; this also covers one made in a sign-in that raced the ban.
      .where((eb) => eb.not(banInForce('u.id', deps.clock.now())))
      .executeTakeFirst();

  /**
   * Inserts the session only while no ban of the user is in force, in the same statement; when the
   * insert is refused, the ban is read to answer 403 with its details.
   */
  async function create(
    request: FastifyRequest,
    input: { userId: string; provider: string; expiresAt?: Date },
    trx: Kysely<Schema>,
  ) {
    const token = newToken(SESSION_TOKEN_PREFIX);
    const signedInAt = deps.clock.now();
    const expiresAt = input.expiresAt ?? new Date(signedInAt.getTime() + SESSION_LIFETIME_MS);
    const insertUnlessBanned = () =>
      trx
        .insertInto('sessions')
        .columns(['token_hash', 'user_id', 'provider', 'ip_address', 'user_agent', 'expires_at', 'created_at'])
        .expression(
          trx
            .selectNoFrom((eb) => [
              eb.val(hashToken(token)).as('token_hash'),
              sql<string>`${input.userId}::uuid`.as('user_id'),
              eb.val(input.provider).as('provider'),
              eb.val(request.ip).as('ip_address'),
              eb.val(request.headers['user-agent'] ?? null).as('user_agent'),
              sql<Date>`${expiresAt}::timestamptz`.as('expires_at'),
              // The clock's time, not the database's: how recent a sign-in is is a rule (self-deletion without a password).
              sql<Date>`${signedInAt}::timestamptz`.as('created_at'),
            ])
            .where((where) => where.not(banInForce(sql<string>`${input.userId}::uuid`, deps.clock.now()))),
        )
        .returning(['id', 'expires_at', 'created_at'])
        .executeTakeFirst();
    let session = await insertUnlessBanned();
    if (!session) {
      // Refused: 403 with the ban's details, unless the ban ended between the two statements; then once more.
      await deps.assertNotBanned(input.userId, trx);
      session = await insertUnlessBanned();
    }
    if (!session) {
      // Refused again: a new ban began in between.
      await deps.assertNotBanned(input.userId, trx);
      throw new Error(`session for ${input.userId} refused, though no ban is in force`);
    }
    return { ...session, token };
  }

  return {
    findLive,

    /**
     * A new session row for the request's client: a fresh ses_ token, stored only as its hash. Every way
     * of signing in goes through here (login, 2FA, registration, sessions made by sign-in apps).
     */
    create,

    /**
     * Starts a 30-day session for a signed-in user and records `auditEvent` with it; returns the
     * AuthResponse. Runs in the caller's transaction so the session and its audit event commit together.
     */
    async issue(
      request: FastifyRequest,
      input: {
        user: { id: string; username: string; preferred_locale: string | null };
        email: string;
        provider: string;
        auditEvent: AuditEventType;
        /** A sign-in for the OAuth provider's pages: recorded like any other, but no session is made. */
        withoutSession?: boolean;
      },
      trx: Kysely<Schema>,
    ): Promise<AuthResult> {
      const session = input.withoutSession
        ? null
        : await create(request, { userId: input.user.id, provider: input.provider }, trx);
      await deps.audit.record(
        request,
        session
          ? {
              eventType: input.auditEvent,
              userId: input.user.id,
              resourceType: 'session',
              resourceId: session.id,
              metadata: { provider: input.provider },
            }
          : {
              eventType: input.auditEvent,
              userId: input.user.id,
              resourceType: 'user',
              resourceId: input.user.id,
              metadata: { provider: input.provider, via: 'oauth_authorize' },
            },
        trx,
      );
      return {
        user_id: input.user.id,
        email: input.email,
        username: input.user.username,
        session_token: session?.token ?? null,
        session_id: session?.id ?? null,
        expires_at: session?.expires_at ?? null,
        provider: input.provider,
        requires_2fa: false,
        temp_token: null,
        preferred_locale: input.user.preferred_locale,
      };
    },

    async tokenHashesOfUser(userId: string): Promise<string[]> {
      const rows = await db.selectFrom('sessions').select('token_hash').where('user_id', '=', userId).execute();
      return rows.map((row) => row.token_hash);
    },

    /**
     * Ends every session of the user (but `keepSessionId`, the one asking, when given) in the caller's
     * transaction; `onCommit` receives the work that drops them from the credential cache once the
     * transaction has committed.
     */
    async revokeAllOfUser(
      userId: string,
      trx: Kysely<Schema>,
      onCommit: (task: () => Promise<void>) => void,
      keepSessionId?: string,
    ): Promise<number> {
      let query = trx.deleteFrom('sessions').where('user_id', '=', userId);
      if (keepSessionId) query = query.where('id', '!=', keepSessionId);
      const rows = await query.returning('token_hash').execute();
      const hashes = rows.map((row) => row.token_hash);
      if (hashes.length) onCommit(() => deps.credentials.invalidate(hashes));
      return hashes.length;
    },

    /** When a session was made (its sign-in), or undefined when it has ended. */
    async signedInAt(sessionId: string): Promise<Date | undefined> {
      const row = await db.selectFrom('sessions').select('created_at').where('id', '=', sessionId).executeTakeFirst();
      return row?.created_at;
    },

    /** Deletes a session; returns its token hash, or undefined when there was none. */
    async delete(id: string, trx: Kysely<Schema>): Promise<string | undefined> {
      const row = await trx.deleteFrom('sessions').where('id', '=', id).returning('token_hash').executeTakeFirst();
      return row?.token_hash;
    },

    /** Credential lookup for the resolver: the caller a session token stands for, or null. */
    async lookup(tokenHash: string): Promise<Caller | null> {
      const session = await findLive(tokenHash);
      if (!session || !sameSecret(session.token_hash, tokenHash)) return null;
      const access = await deps.accessOfUser(session.user_id);
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
  };
}

export type SessionStore = ReturnType<typeof createSessionStore>;
