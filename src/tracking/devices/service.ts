import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Static } from 'typebox';
import type { AuditWriter } from '../../platform/audit.js';
import type { Caller } from '../../platform/auth/caller.js';
import type { Schema } from '../../platform/db/schema/index.js';
import { afterCommit, type DomainEventBus } from '../../platform/events.js';
import type { TrackingScope } from '../sharing/index.js';
import type { CacheOptions, Caches } from '../../platform/kv/cache.js';

import { createDevicesRepo, type DeviceFields } from './repo.js';
import { DeviceErrors } from './errors.js';
import type { CreateDeviceBody, UpdateDeviceBody } from './schemas.js';

/** What create and update take: the bodies of POST /v1/devices and PATCH /v1/devices/{id}. */
type DeviceInput = Static<typeof CreateDeviceBody> | Static<typeof UpdateDeviceBody>;

/** What devices need of the API-key module: whether a key may be linked, and a new key for a device. */
export interface ApiKeyLookup {
  /** A key's owner and whether it is a system key. */
  linkable(id: string): Promise<{ is_system: boolean; user_id: string | null } | undefined>;
  /**
   * Before a device's new key is made (outside its transaction): what the key will hold, decided from the key it
   * replaces, and checked against the caller (their permissions; a session's recent sign-in or current password).
   */
  planDeviceKey(
    request: FastifyRequest,
    caller: Caller,
    device: { name: string; apiKeyId: string | null },
    currentPassword: string | undefined,
  ): Promise<DeviceKeyPlan>;
  /**
   * In the device's transaction: makes the planned key and revokes `replacing` (the key linked to the device now),
   * both on the activity log; `onCommit` gets what must wait for the commit (every node forgetting the old key).
   */
  makeDeviceKey(
    request: FastifyRequest,
    caller: Caller,
    plan: DeviceKeyPlan,
    device: { id: string; replacing: string | null },
    trx: Kysely<Schema>,
    onCommit: (task: () => Promise<void>) => void,
  ): Promise<NewDeviceKey>;
}

/** What a device's new key will be: the API-key module decides and reads it back. */
export interface DeviceKeyPlan {
  name: string;
  description: string | null;
  scopes: string[];
}

/** A device's new key as made: its value is in this answer only. */
export interface NewDeviceKey {
  id: string;
  key: string;
  key_prefix: string;
  name: string;
  scopes: string[];
  user_id: string | null;
  expires_at: Date | null;
}

/** What a new point of an API key needs of the device it reports to; null: the key has none. */
export type KeyDevice = { id: string; is_public: boolean } | null;

/**
 * The device of each API key is read for every GPS point sent with that key, so it is cached (a key without
 * a device too). Every write that changes which device a key reports to, or that device's visibility,
 * forgets the keys it touches on every node; the local expiry bounds staleness should that message be lost.
 */
const KEY_DEVICE_CACHE: CacheOptions<KeyDevice> = { sharedTtlSecs: 300, localTtlMs: 15_000 };

/** Devices, and the link from a device to the API key it sends with. */
export function createDevicesService(deps: {
  db: Kysely<Schema>;
  apiKeys: ApiKeyLookup;
  events: Pick<DomainEventBus, 'emit'>;
  caches: Caches;
  audit: AuditWriter;
}) {
  const repo = createDevicesRepo(deps.db);
  const keyDevices = deps.caches.define('device_of_api_key', KEY_DEVICE_CACHE);
  const forgetKeys = (keys: (string | null | undefined)[]) =>
    keyDevices.invalidate([...new Set(keys.filter((key): key is string => Boolean(key)))]);

  /**
   * Only a key the caller owns, or a system key, may be linked (super admins: any key; a self-service user:
   * only their own). Answers the key's owner.
   */
  async function assertLinkable(caller: Caller, scope: TrackingScope, apiKeyId: string): Promise<string | null> {
    const key = await deps.apiKeys.linkable(apiKeyId);
    if (!key) throw DeviceErrors.unknown_api_key();
    const own = caller.userId !== null && key.user_id === caller.userId;
    if (!caller.isSuperAdmin && !own && (!key.is_system || !scope.all)) throw DeviceErrors.api_key_not_linkable();
    return key.user_id;
  }

  /** The device, if the scope reaches it (404 otherwise: a device one does not see is not there). */
  async function visible(scope: TrackingScope, id: string) {
    if (!scope.all && !scope.access.seesLive(id)) throw DeviceErrors.not_found();
    const device = await repo.get(id);
    if (!device) throw DeviceErrors.not_found();
    return device;
  }

  /** A device the scope may change: every device for the global permission, else only one's own. */
  async function changeable(scope: TrackingScope, id: string): Promise<void> {
    if (scope.all) return;
    if (!scope.access.seesLive(id)) throw DeviceErrors.not_found();
    if (scope.access.level(id) !== 'owner') throw DeviceErrors.not_owner();
  }

  type Device = NonNullable<Awaited<ReturnType<typeof repo.get>>>;

  /**
   * `id`: the device updated (none: a new one). The key it reported with and the key linked now are forgotten
   * by the key-device cache when the write is made (the cache keeps them out until the commit is surely done).
   */
  async function save(
    caller: Caller,
    scope: TrackingScope,
    input: DeviceInput,
    id: string | undefined,
    write: (trx: Kysely<Schema>, fields: DeviceFields, keyOwner: string | null) => Promise<Device | undefined>,
  ) {
    const { api_key_id: apiKeyId, ...fields } = input;
    // One spelling per colour, so the console and clients can compare them.
    if (fields.color) fields.color = fields.color.toLowerCase();
    const keyOwner = apiKeyId === undefined ? null : await assertLinkable(caller, scope, apiKeyId);
    return deps.db.transaction().execute(async (trx) => {
      const previousKey = id === undefined ? null : await repo.keyOf(trx, id);
      const device = await write(trx, fields, keyOwner);
      if (!device) throw DeviceErrors.not_found();
      await forgetKeys([previousKey, apiKeyId]);
      return apiKeyId === undefined ? device : repo.linkKey(trx, device.id, apiKeyId);
    });
  }

  return {
    /** A page of the devices the scope reaches, newest first. */
    page: (scope: TrackingScope, limit: number, offset: number) =>
      scope.all ? repo.page(limit, offset) : repo.pageOf(scope.access.deviceIds(), limit, offset),
    /** Up to `limit` devices the scope reaches, in the order of their ids, after the id `after`. */
    chunk: (scope: TrackingScope, limit: number, after?: string) =>
      repo.chunk(scope.all ? null : scope.access.deviceIds(), limit, after),
    count: repo.count,
    ids: repo.ids,

    get: visible,

    /** Who owns which device (sharing reads a user's own and their sharers' devices). */
    ownedBy: repo.ownedBy,
    ownerOf: repo.get,

    /** The devices of these ids that exist, in one query (GraphQL batches its lookups through this). */
    byIds: repo.byIds,

    /** The device linked to an API key, if any (cached): GPS points sent with that key belong to it. */
    deviceOfKey: async (apiKeyId: string): Promise<KeyDevice> =>
      (await keyDevices.get(apiKeyId, async () => (await repo.byApiKey(apiKeyId)) ?? null)) ?? null,
    /** The devices that report with these API keys (a user's own, for their data export). */
    ofApiKeys: repo.ofApiKeys,
    /** The devices a user owns (their data export). */
    ofOwner: repo.ofOwner,

    /** Owned by the owner of the key it is linked to, else by its creator (none for the system key). */
    async create(caller: Caller, scope: TrackingScope, input: Static<typeof CreateDeviceBody>) {
      const device = await save(caller, scope, input, undefined, (trx, fields, keyOwner) =>
        repo.insert(trx, {
          ...fields,
          name: input.name,
          owner_id: keyOwner ?? (caller.isSystem ? null : caller.userId),
        }),
      );
      await deps.events.emit('device.created', { deviceId: device.id, ownerId: device.owner_id });
      return device;
    },

    async update(caller: Caller, scope: TrackingScope, id: string, input: Static<typeof UpdateDeviceBody>) {
      await changeable(scope, id);
      return save(caller, scope, input, id, (trx, fields) => repo.update(trx, id, fields));
    },

    /**
     * POST /v1/devices/{id}/key: a new API key linked to the device, and the key it reported with revoked in the
     * same transaction. The key linked when the transaction holds the device's row is the one revoked, so two
     * replacements at once leave one key, not two.
     */
    async replaceKey(
      request: FastifyRequest,
      caller: Caller,
      scope: TrackingScope,
      id: string,
      currentPassword: string | undefined,
    ) {
      await changeable(scope, id);
      const device = await repo.get(id);
      if (!device) throw DeviceErrors.not_found();
      const plan = await deps.apiKeys.planDeviceKey(
        request,
        caller,
        { name: device.name, apiKeyId: device.api_key_id },
        currentPassword,
      );
      const { onCommit, committed } = afterCommit();
      const made = await deps.db.transaction().execute(async (trx) => {
        const replacing = await repo.lockedKeyOf(trx, id);
        if (replacing === undefined) throw DeviceErrors.not_found();
        const key = await deps.apiKeys.makeDeviceKey(request, caller, plan, { id, replacing }, trx, onCommit);
        const linked = await repo.linkKey(trx, id, key.id);
        await forgetKeys([replacing, key.id]);
        return { ...key, device: linked, revoked_key_id: replacing };
      });
      await committed();
      return made;
    },

    /**
     * Its points stay without device. Those who reach it are read before its shares go with it (device.deleting)
     * and told after the commit; the latest-point cache is told (device.deleted), and its key's cached device forgotten.
     */
    async remove(scope: TrackingScope, id: string) {
      await changeable(scope, id);
      const { onCommit, committed } = afterCommit();
      await deps.db.transaction().execute(async (trx) => {
        const owner = await repo.ownerIn(trx, id);
        if (owner === undefined) throw DeviceErrors.not_found();
        await deps.events.emit('device.deleting', { deviceId: id, ownerId: owner, trx, onCommit });
        const deleted = await repo.delete(trx, id);
        if (!deleted) throw DeviceErrors.not_found();
        await forgetKeys([deleted.api_key_id]);
      });
      await committed();
      await deps.events.emit('device.deleted', { deviceId: id });
    },

    /**
     * Hands the device to another user (its owner, or a holder of devices:write); its shares end. Both owners'
     * activity logs show it (`device_transferred`, one event each), committed with the handover.
     */
    async transfer(request: FastifyRequest, caller: Caller, scope: TrackingScope, id: string, toUserId: string) {
      await changeable(scope, id);
      const to = toUserId.toLowerCase();
      const { onCommit, committed } = afterCommit();
      const device = await deps.db.transaction().execute(async (trx) => {
        const from = await repo.ownerIn(trx, id);
        const moved = await repo.transfer(trx, id, to);
        if (!moved || from === undefined) throw DeviceErrors.not_found();
        await deps.events.emit('device.transferring', {
          deviceId: id,
          fromUserId: from,
          toUserId: to,
          trx,
          onCommit,
        });
        const metadata = { device_id: id, from_user_id: from, to_user_id: to };
        for (const userId of new Set([to, ...(from === null ? [] : [from])]))
          await deps.audit.record(
            request,
            {
              eventType: 'device_transferred',
              userId,
              actorId: caller.userId,
              resourceType: 'device',
              resourceId: id,
              metadata,
            },
            trx,
          );
        return moved;
      });
      await committed();
      return device;
    },
  };
}

export type DevicesService = ReturnType<typeof createDevicesService>;
