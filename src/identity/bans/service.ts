import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { AuditWriter } from '../../platform/audit.js';
import type { Caller } from '../../platform/auth/caller.js';
import type { Clock } from '../../platform/clock.js';
import type { Schema } from '../../platform/db/schema/index.js';
import { afterCommit, type DomainEventBus } from '../../platform/events.js';
import type { AccessService } from '../access/service.js';
import type { UsersService } from '../users/service.js';
import { BanErrors, bannedError } from './errors.js';
import { createBansRepo } from './repo.js';
import type { BanInput } from './schemas.js';

interface Deps {
  db: Kysely<Schema>;
  clock: Clock;
  audit: AuditWriter;
  events: DomainEventBus;
  users: Pick<UsersService, 'exists' | 'lockById' | 'assertMayManage'>;
  access: Pick<AccessService, 'accessOfUser'>;
}

/**
 * Bans: while one is in force the user cannot sign in and no credential of theirs works (the
 * session and API-key lookups leave them out, see `banInForce`). A ban with an end stops applying
 * at that moment by itself; nothing has to run.
 */
export function createBansService(deps: Deps) {
  const { db, clock } = deps;
  const repo = createBansRepo(db);

  async function assertMayBan(caller: Caller, userId: string): Promise<void> {
    if (caller.userId === userId) throw BanErrors.self();
    const target = await deps.access.accessOfUser(userId);
    if (target.isSuperAdmin && !caller.isSuperAdmin && !caller.isSystem) throw BanErrors.super_admin();
    await deps.users.assertMayManage(caller, userId);
  }

  async function existing(userId: string): Promise<void> {
    if (!(await deps.users.exists(userId))) throw BanErrors.user_not_found();
  }

  return {
    /** The ban in force now, if any. */
    inForce: (userId: string) => repo.inForce(userId, clock.now()),

    isBanned: async (userId: string) => Boolean(await repo.inForce(userId, clock.now())),

    /** For every way of signing in: 403 naming the ban and its end while one is in force. */
    async assertNotBanned(userId: string, executor?: Kysely<Schema>): Promise<void> {
      const ban = await repo.inForce(userId, clock.now(), executor);
      if (ban) throw bannedError(ban);
    },

    async status(userId: string) {
      await existing(userId);
      const ban = await repo.inForce(userId, clock.now());
      return { is_banned: Boolean(ban), active_ban: ban ?? null };
    },

    async history(userId: string) {
      await existing(userId);
      return repo.history(userId);
    },

    /** Bans the user and ends their sessions in one transaction; their cached credentials are dropped after it. */
    async ban(request: FastifyRequest, caller: Caller, userId: string, input: BanInput) {
      await assertMayBan(caller, userId);
      const { onCommit, committed } = afterCommit();
      const ban = await db.transaction().execute(async (trx) => {
        // The user row lock orders concurrent bans of one user, so only one can be in force.
        if (!(await deps.users.lockById(userId, trx))) throw BanErrors.user_not_found();
        const now = clock.now();
        if (await repo.inForce(userId, now, trx)) throw BanErrors.already_banned();
        const expiresAt = input.duration_seconds ? new Date(now.getTime() + input.duration_seconds * 1000) : null;
        const created = await repo.insert(
          {
            user_id: userId,
            reason: input.reason ?? null,
            banned_by: caller.userId,
            banned_at: now,
            expires_at: expiresAt,
          },
          trx,
        );
        const revoked = await deps.events.emit('user.banning', {
          userId,
          reason: created.reason,
          expiresAt,
          trx,
          onCommit,
        });
        await deps.audit.record(
          request,
          {
            eventType: 'user_banned',
            userId,
            actorId: caller.userId,
            resourceType: 'ban',
            resourceId: created.id,
            metadata: {
              reason: created.reason,
              expires_at: expiresAt?.toISOString() ?? null,
              sessions_revoked: revoked.sessions_revoked ?? 0,
            },
          },
          trx,
        );
        return created;
      });
      await committed();
      return ban;
    },

    /** Lifts the ban in force; the history keeps it with unbanned_at and unbanned_by. */
    async unban(request: FastifyRequest, caller: Caller, userId: string): Promise<void> {
      // Lifting a ban is as much the target's business as placing one: a lesser admin may not undo a super admin's.
      await deps.users.assertMayManage(caller, userId);
      await db.transaction().execute(async (trx) => {
        if (!(await deps.users.lockById(userId, trx))) throw BanErrors.user_not_found();
        const lifted = await repo.lift(userId, { unbanned_by: caller.userId, unbanned_at: clock.now() }, trx);
        if (!lifted) throw BanErrors.not_banned();
        await deps.audit.record(
          request,
          { eventType: 'user_unbanned', userId, actorId: caller.userId, resourceType: 'ban', resourceId: lifted },
          trx,
        );
      });
      await deps.events.emit('user.unbanned', { userId });
    },
  };
}

export type BansService = ReturnType<typeof createBansService>;
