import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { AuditWriter } from '../../platform/audit.js';
import type { Caller } from '../../platform/auth/caller.js';
import type { Clock } from '../../platform/clock.js';
import type { Schema } from '../../platform/db/schema/index.js';
import { afterCommit, type DomainEventBus } from '../../platform/events.js';
import type { AccessService } from '../access/service.js';
import { UserErrors } from './errors.js';
import type { createUsersRepo } from './repo.js';

/** How long a deleted user can still be restored before the purge removes them for good. */
export const DELETION_GRACE_MS = 7 * 86_400_000;
/** Users one purge run removes at most; the next run goes on (a backlog never makes one run endless). */
const PURGE_BATCH = 500;

interface Deps {
  db: Kysely<Schema>;
  clock: Clock;
  repo: ReturnType<typeof createUsersRepo>;
  audit: AuditWriter;
  events: Pick<DomainEventBus, 'emit'>;
  access: Pick<AccessService, 'lockSuperAdmins'>;
  log: FastifyBaseLogger;
}

/**
 * The end of an account: soft deletion starts a 7-day grace period in which an administrator can
 * cancel it; after it (or at once, with force-delete) the purge removes the user's personal data. The
 * audit trail stays, pseudonymised (`user.purging`).
 */
export function createUserDeletion(deps: Deps) {
  const { db, clock, repo } = deps;

  const scheduledAt = (deletedAt: Date) => new Date(deletedAt.getTime() + DELETION_GRACE_MS);

  /** Removes one user for good, in the caller's transaction, with the user_deleted event that says so. */
  async function purge(
    request: FastifyRequest | null,
    userId: string,
    trx: Kysely<Schema>,
    audit: { actorId: string | null; reason: string | null },
  ) {
    const { onCommit, committed } = afterCommit();
    const removed = await deps.events.emit('user.purging', { userId, trx, onCommit });
    await repo.purge(userId, trx);
    await deps.audit.record(
      request,
      {
        eventType: 'user_deleted',
        userId,
        actorId: audit.actorId,
        resourceType: 'user',
        resourceId: userId,
        metadata: { permanent: true, reason: audit.reason, ...removed },
      },
      trx,
    );
    return committed;
  }

  return {
    async status(userId: string) {
      const user = await repo.findAnyById(userId);
      if (!user) throw UserErrors.not_found();
      return {
        is_scheduled_for_deletion: user.deleted_at !== null,
        scheduled_deletion_at: user.deleted_at && scheduledAt(user.deleted_at),
        is_deleted: user.deleted_at !== null,
        deleted_at: user.deleted_at,
      };
    },

    /** Restores a user within the grace period. Sessions and API keys ended by the deletion stay ended. */
    async cancel(request: FastifyRequest, caller: Caller, userId: string): Promise<void> {
      await db.transaction().execute(async (trx) => {
        const user = await repo.lockAnyById(userId, trx);
        if (!user) throw UserErrors.not_found();
        if (!user.deleted_at) throw UserErrors.not_scheduled_for_deletion();
        await repo.restore(userId, trx);
        await deps.audit.record(
          request,
          {
            eventType: 'user_updated',
            userId,
            actorId: caller.userId,
            resourceType: 'user',
            resourceId: userId,
            metadata: { fields: ['deleted_at'], deletion_cancelled: true },
          },
          trx,
        );
      });
    },

    /** Deletes a user at once and for good, whether active or in the grace period. */
    async forceDelete(request: FastifyRequest, caller: Caller, userId: string, reason: string): Promise<void> {
      const committed = await db.transaction().execute(async (trx) => {
        const admins = await deps.access.lockSuperAdmins(trx);
        if (!(await repo.lockAnyById(userId, trx))) throw UserErrors.not_found();
        if (admins.size === 1 && admins.has(userId)) throw UserErrors.last_super_admin();
        return purge(request, userId, trx, { actorId: caller.userId, reason });
      });
      await committed();
    },

    /**
     * The scheduled job: purges every user whose grace period is over. Each user is claimed with
     * FOR UPDATE SKIP LOCKED in their own transaction, so several nodes running it at once never purge
     * one user twice, and one failure does not undo the others. Returns how many this run purged.
     */
    async purgeDue(): Promise<number> {
      const dueBefore = new Date(clock.now().getTime() - DELETION_GRACE_MS);
      let purged = 0;
      while (purged < PURGE_BATCH) {
        const committed = await db.transaction().execute(async (trx) => {
          const due = await repo.claimDeletedBefore(dueBefore, trx);
          return due ? purge(null, due.id, trx, { actorId: null, reason: 'grace period over' }) : null;
        });
        if (!committed) break;
        await committed();
        purged++;
      }
      if (purged === PURGE_BATCH) deps.log.info({ purged }, 'more deleted users are due; the next run goes on');
      return purged;
    },
  };
}
