import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Static } from 'typebox';
import type { AuditEventType, AuditWriter } from '../../platform/audit.js';
import { hasPermission, type Caller } from '../../platform/auth/caller.js';
import { missingPermission } from '../../platform/auth/hooks.js';
import type { Clock } from '../../platform/clock.js';
import type { Schema } from '../../platform/db/schema/index.js';
import type { DomainEvents } from '../../platform/events.js';
import type { CacheOptions, Caches } from '../../platform/kv/cache.js';
import { createSharesRepo, type NewShare, type ShareRow } from './repo.js';
import { SharingErrors } from './errors.js';
import { DeviceErrors } from '../devices/errors.js';
import type { CreateOwnerShareBody, UpdateShareBody } from './schemas.js';
import { DeviceAccess, EVERY_DEVICE, type Grant, type TrackingScope } from './scope.js';

/** What sharing needs of devices: who owns which (the devices module answers). */
export interface DeviceOwners {
  ownedBy(ownerIds: string[]): Promise<{ id: string; owner_id: string | null }[]>;
  ownerOf(deviceId: string): Promise<{ owner_id: string | null } | undefined>;
  /** The device linked to an API key (cached): a key linked to one reaches no other. */
  deviceOfKey(apiKeyId: string): Promise<{ id: string } | null>;
}

/** What sharing needs of groups (the identity groups module answers). */
export interface GroupMemberships {
  groupIdsOf(userId: string): Promise<string[]>;
  memberIdsOf(groupId: string): Promise<string[]>;
  isMember(groupId: string, userId: string): Promise<boolean>;
  namesOf(groupIds: readonly string[]): Promise<Map<string, string>>;
}

/** A share as answered: with the sharer's username and the grantee's name. */
export type NamedShare = ShareRow & { owner_username: string | null; grantee_name: string | null };

/** What sharing needs of users: who a username is, and the names a share shows (the users module answers). */
export interface UserNames {
  idOfUsername(username: string): Promise<string | undefined>;
  usernamesOf(userIds: readonly string[]): Promise<Map<string, string>>;
}

/**
 * A user's grants are read on every tracking request of theirs (and held by their open WebSockets), so they
 * are cached; every change that can alter them forgets the users it reaches, on every node.
 */
const GRANTS_CACHE: CacheOptions<Grant[]> = { sharedTtlSecs: 300, localTtlMs: 15_000 };
const MAX_SHARES_PER_DEVICE = 100;
const MAX_SHARES_PER_OWNER = 1_000;

/** Self-service tracking and sharing: the one visibility rule (scope.ts) and the shares it reads. */
export function createSharingService(deps: {
  db: Kysely<Schema>;
  devices: DeviceOwners;
  groups: GroupMemberships;
  users: UserNames;
  caches: Caches;
  clock: Clock;
  audit: AuditWriter;
  /** Whether self-service tracking is on (system config tracking.self_service). */
  selfService: () => Promise<boolean>;
}) {
  const repo = createSharesRepo(deps.db);
  const listeners: ((userIds: string[]) => void)[] = [];
  const grantsCache = deps.caches.define('tracking_grants', {
    ...GRANTS_CACHE,
    onInvalidated: (userIds) => listeners.forEach((listener) => listener(userIds)),
  });

  async function loadGrants(userId: string): Promise<Grant[]> {
    const shares = await repo.reaching(userId, await deps.groups.groupIdsOf(userId));
    const owners = new Set([userId, ...shares.filter((s) => s.device_id === null).map((s) => s.owner_id)]);
    const owned = await deps.devices.ownedBy([...owners]);
    const grants: Grant[] = owned
      .filter((device) => device.owner_id === userId)
      .map((device) => ({
        device_id: device.id,
        level: 'owner',
        history_days: null,
        expires_at: null,
        shared_by: null,
      }));
    for (const share of shares) {
      const deviceIds =
        share.device_id !== null
          ? [share.device_id]
          : owned.filter((device) => device.owner_id === share.owner_id).map((device) => device.id);
      for (const deviceId of deviceIds)
        grants.push({
          device_id: deviceId,
          level: share.level,
          history_days: share.history_days,
          expires_at: share.expires_at?.getTime() ?? null,
          shared_by: share.owner_id,
        });
    }
    return grants;
  }

  const grantsOf = async (userId: string) => (await grantsCache.get(userId, () => loadGrants(userId))) ?? [];

  /** What one user reaches now. */
  async function accessOf(userId: string): Promise<DeviceAccess> {
    return new DeviceAccess(await grantsOf(userId), deps.clock.nowMs());
  }

  /** Users whose grants these owners' shares feed (and the owners): told when the owners' devices change. */
  async function audienceOf(ownerIds: string[], deviceId?: string): Promise<string[]> {
    const shares = await repo.byOwners(ownerIds, deviceId);
    return [...new Set([...ownerIds, ...(await granteesOf(shares))])];
  }

  async function granteesOf(shares: ShareRow[]): Promise<string[]> {
    const users = shares.flatMap((share) => (share.user_id ? [share.user_id] : []));
    const groups = [...new Set(shares.flatMap((share) => (share.group_id ? [share.group_id] : [])))];
    const members = await Promise.all(groups.map((groupId) => deps.groups.memberIdsOf(groupId)));
    return [...new Set([...users, ...members.flat()])];
  }

  const forget = (userIds: string[]) => grantsCache.invalidate([...new Set(userIds)]);

  /** The owner on whose behalf the caller manages a device's shares: its owner, or a holder of devices:write. */
  async function ownerForSharing(caller: Caller, deviceId: string): Promise<string> {
    const device = await deps.devices.ownerOf(deviceId);
    const global = hasPermission(caller, 'devices:write');
    if (!device) throw DeviceErrors.not_found();
    if (device.owner_id === caller.userId && device.owner_id !== null) return device.owner_id;
    if (!global) {
      const scope = await scopeOf(caller, 'devices:read');
      // A device the caller does not see is not found; one they see but do not own may not be shared by them.
      if (!scope.all && !scope.access.seesLive(deviceId)) throw DeviceErrors.not_found();
      throw SharingErrors.not_owner();
    }
    if (!device.owner_id) throw SharingErrors.not_owner('The device has no owner to share it');
    return device.owner_id;
  }

  async function scopeOf(caller: Caller, permission: string): Promise<TrackingScope> {
    if (hasPermission(caller, permission)) return EVERY_DEVICE;
    const own = `${permission}_own`;
    if (!caller.userId || !hasPermission(caller, own)) throw missingPermission(permission);
    if (!(await deps.selfService())) throw SharingErrors.self_service_off();
    let access = await accessOf(caller.userId);
    if (caller.kind === 'api_key' && caller.apiKeyId) {
      const keyDevice = await deps.devices.deviceOfKey(caller.apiKeyId);
      if (keyDevice) access = access.only(keyDevice.id);
    }
    return { all: false, userId: caller.userId, access };
  }

  /** Who a new share reaches: a user (by id or username) or a group the sharer belongs to. */
  async function granteeOf(
    caller: Caller,
    ownerId: string,
    share: { user_id?: string; username?: string; group_id?: string },
  ): Promise<{ user_id: string | null; group_id: string | null }> {
    const names = [share.user_id, share.username, share.group_id].filter((name) => name !== undefined);
    if (names.length !== 1) throw SharingErrors.unknown_grantee('Name exactly one of user_id, username and group_id');
    if (share.group_id !== undefined) {
      if (!(await deps.groups.isMember(share.group_id, caller.userId ?? ''))) throw SharingErrors.not_a_member();
      return { user_id: null, group_id: share.group_id.toLowerCase() };
    }
    const userId = share.user_id?.toLowerCase() ?? (await deps.users.idOfUsername(share.username!.toLowerCase()));
    if (!userId) throw SharingErrors.unknown_grantee('username names nobody');
    if (userId === ownerId) throw SharingErrors.self_share();
    return { user_id: userId, group_id: null };
  }

  /** Shares as answered: with the sharer's username and the grantee's name (one query each for a list). */
  async function named(rows: ShareRow[]): Promise<NamedShare[]> {
    const [usernames, groupNames] = await Promise.all([
      deps.users.usernamesOf([
        ...new Set(rows.flatMap((row) => [row.owner_id, ...(row.user_id ? [row.user_id] : [])])),
      ]),
      deps.groups.namesOf([...new Set(rows.flatMap((row) => (row.group_id ? [row.group_id] : [])))]),
    ]);
    return rows.map((row) => ({
      ...row,
      owner_username: usernames.get(row.owner_id) ?? null,
      grantee_name: (row.user_id ? usernames.get(row.user_id) : groupNames.get(row.group_id ?? '')) ?? null,
    }));
  }

  function checkExpiry(expiresAt: string | null | undefined): Date | null {
    if (!expiresAt) return null;
    const at = new Date(expiresAt);
    if (at.getTime() <= deps.clock.nowMs()) throw SharingErrors.expired();
    return at;
  }

  /** A share's event on its owner's activity log, by the caller, with what the share grants now (or granted). */
  const record = (
    request: FastifyRequest,
    caller: Caller,
    eventType: AuditEventType,
    share: ShareRow,
    trx: Kysely<Schema>,
  ) =>
    deps.audit.record(
      request,
      {
        eventType,
        userId: share.owner_id,
        actorId: caller.userId,
        resourceType: 'device_share',
        resourceId: share.id,
        metadata: {
          device_id: share.device_id,
          user_id: share.user_id,
          group_id: share.group_id,
          level: share.level,
          history_days: share.history_days,
          expires_at: share.expires_at?.toISOString() ?? null,
        },
      },
      trx,
    );

  /** A write of one share and its event, in one transaction (none: there was no such share). */
  const audited = (
    request: FastifyRequest,
    caller: Caller,
    eventType: AuditEventType,
    write: (trx: Kysely<Schema>) => Promise<ShareRow | undefined>,
  ) =>
    deps.db.transaction().execute(async (trx) => {
      const share = await write(trx);
      if (share) await record(request, caller, eventType, share, trx);
      return share;
    });

  /** The share, if the caller may change it: its owner, or a holder of devices:write. */
  async function manageable(caller: Caller, shareId: string, deviceId?: string): Promise<ShareRow> {
    const share = await repo.get(shareId);
    const mayManage =
      share &&
      (deviceId === undefined || share.device_id === deviceId) &&
      (share.owner_id === caller.userId || hasPermission(caller, 'devices:write'));
    if (!mayManage) throw SharingErrors.share_not_found();
    return share;
  }

  return {
    scopeOf,
    accessOf,

    /**
     * The grants a live subscriber reads new points by, for a caller without `permission` (gps:read): null when
     * the caller holds it (every point) or may not read own points at all. A key linked to a device: that device's.
     */
    async liveGrantsOf(caller: Caller, permission: string): Promise<Grant[] | null> {
      if (hasPermission(caller, permission) || !caller.userId || !hasPermission(caller, `${permission}_own`))
        return null;
      if (!(await deps.selfService())) return null;
      const grants = await grantsOf(caller.userId);
      const keyDevice =
        caller.kind === 'api_key' && caller.apiKeyId ? await deps.devices.deviceOfKey(caller.apiKeyId) : null;
      return keyDevice ? grants.filter((grant) => grant.device_id === keyDevice.id) : grants;
    },

    /** Told (on every node) of the users whose grants changed: open subscriptions re-read what they may see. */
    onChanged(listener: (userIds: string[]) => void): void {
      listeners.push(listener);
    },

    /** The grants of these owners' audience are forgotten (a device of theirs was made, removed or handed over). */
    forgetAudienceOf: async (ownerIds: (string | null)[], deviceId?: string) => {
      const owners = ownerIds.filter((id): id is string => id !== null);
      if (owners.length > 0) await forget(await audienceOf(owners, deviceId));
    },

    /** A group's members changed, or it went: those users' grants are read again. */
    forgetUsers: forget,

    /** A device changed hands: its shares end (they were the old owner's to give), in the handover's transaction. */
    async endSharesOfDevice(trx: Kysely<Schema>, deviceId: string, onCommit: (task: () => Promise<void>) => void) {
      const ended = await repo.deleteOfDevice(trx, deviceId);
      onCommit(async () => forget(await granteesOf(ended)));
    },

    /**
     * A device is being deleted: who reaches it (its owner, and the grantees of its shares and of its owner's shares
     * of every device) is read before its shares go with it, and re-reads their grants after the commit.
     */
    async deviceDeleting({ deviceId, ownerId, trx, onCommit }: DomainEvents['device.deleting']) {
      const shares = await repo.reachingDevice(trx, deviceId, ownerId);
      onCommit(async () => forget([...(ownerId === null ? [] : [ownerId]), ...(await granteesOf(shares))]));
    },

    async create(request: FastifyRequest, caller: Caller, input: Static<typeof CreateOwnerShareBody>) {
      const deviceId = input.device_id ?? null;
      const ownerId = deviceId ? await ownerForSharing(caller, deviceId) : (caller.userId ?? '');
      if (!ownerId) throw SharingErrors.not_owner('Only a user shares their devices');
      const grantee = await granteeOf(caller, ownerId, input);
      const counts = await repo.counts(ownerId, deviceId);
      if (counts.owner >= MAX_SHARES_PER_OWNER || (deviceId && counts.device >= MAX_SHARES_PER_DEVICE))
        throw SharingErrors.too_many();
      const share: NewShare = {
        owner_id: ownerId,
        device_id: deviceId,
        ...grantee,
        level: input.level,
        history_days: input.level === 'live' ? null : (input.history_days ?? null),
        expires_at: checkExpiry(input.expires_at),
      };
      const result = await deps.db.transaction().execute(async (trx) => {
        const written = await repo.upsert(trx, share);
        await record(request, caller, 'device_shared', written.share, trx);
        return written;
      });
      await forget(await granteesOf([result.share]));
      const [answered] = await named([result.share]);
      return { share: answered!, created: result.created };
    },

    async listOfDevice(caller: Caller, deviceId: string) {
      const ownerId = await ownerForSharing(caller, deviceId);
      return named(await repo.byOwners([ownerId], deviceId));
    },

    /** outgoing: the shares I made; incoming: those reaching me (directly or through my groups). */
    async list(caller: Caller, direction: 'incoming' | 'outgoing') {
      if (!caller.userId) return [];
      if (direction === 'outgoing') return named(await repo.byOwners([caller.userId]));
      return named(await repo.reaching(caller.userId, await deps.groups.groupIdsOf(caller.userId)));
    },

    async update(
      request: FastifyRequest,
      caller: Caller,
      shareId: string,
      input: Static<typeof UpdateShareBody>,
      deviceId?: string,
    ) {
      const share = await manageable(caller, shareId, deviceId);
      const level = input.level ?? share.level;
      const fields = {
        level,
        ...(input.history_days !== undefined && { history_days: input.history_days }),
        ...(level === 'live' && { history_days: null }),
        ...(input.expires_at !== undefined && { expires_at: checkExpiry(input.expires_at) }),
      };
      const updated = await audited(request, caller, 'device_share_changed', (trx) =>
        repo.update(trx, shareId, fields),
      );
      if (!updated) throw SharingErrors.share_not_found();
      await forget(await granteesOf([updated]));
      const [answered] = await named([updated]);
      return answered!;
    },

    async remove(request: FastifyRequest, caller: Caller, shareId: string, deviceId?: string) {
      await manageable(caller, shareId, deviceId);
      const removed = await audited(request, caller, 'device_share_ended', (trx) => repo.delete(trx, shareId));
      if (!removed) throw SharingErrors.share_not_found();
      await forget(await granteesOf([removed]));
    },
  };
}

export type SharingService = ReturnType<typeof createSharingService>;
