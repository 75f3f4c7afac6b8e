import type { Kysely } from 'kysely';
import type { Static } from 'typebox';
import type { Caller } from '../../platform/auth/caller.js';
import type { Schema } from '../../platform/db/schema/index.js';
import type { DomainEventBus } from '../../platform/events.js';

import { createDevicesRepo, type DeviceFields } from './repo.js';
import { DeviceErrors } from './errors.js';
import type { CreateDeviceBody, UpdateDeviceBody } from './schemas.js';

/** What create and update take: the bodies of POST /v1/devices and PATCH /v1/devices/{id}. */
type DeviceInput = Static<typeof CreateDeviceBody> | Static<typeof UpdateDeviceBody>;

/** What devices need to know of an API key: its owner and whether it is a system key (the API-key module answers). */
export interface ApiKeyLookup {
  linkable(id: string): Promise<{ is_system: boolean; user_id: string | null } | undefined>;
}

/** Devices, and the link from a device to the API key it sends with. */
export function createDevicesService(deps: { db: Kysely<Schema>; apiKeys: ApiKeyLookup; events: Pick<DomainEventBus, 'emit'> }) {
  const repo = createDevicesRepo(deps.db);

  /** Only a key the caller owns, or a system key, may be linked (super admins: any key). */
  async function assertLinkable(caller: Caller, apiKeyId: string): Promise<void> {
    const key = await deps.apiKeys.linkable(apiKeyId);
    if (!key) throw DeviceErrors.unknown_api_key();
    if (!caller.isSuperAdmin && !key.is_system && (caller.userId === null || key.user_id !== caller.userId)) {
      throw DeviceErrors.api_key_not_linkable();
    }
  }

  type Device = NonNullable<Awaited<ReturnType<typeof repo.get>>>;

  async function save(caller: Caller, input: DeviceInput, write: (trx: Kysely<Schema>, fields: DeviceFields) => Promise<Device | undefined>) {
    const { api_key_id: apiKeyId, ...fields } = input;
    if (apiKeyId !== undefined) await assertLinkable(caller, apiKeyId);
    return deps.db.transaction().execute(async (trx) => {
      const device = await write(trx, fields);
      if (!device) throw DeviceErrors.not_found();
      return apiKeyId === undefined ? device : repo.linkKey(trx, device.id, apiKeyId);
    });
  }

  return {
    page: repo.page,
    count: repo.count,
    ids: repo.ids,

    async get(id: string) {
      const device = await repo.get(id);
      if (!device) throw DeviceErrors.not_found();
      return device;
    },

    /** The devices of these ids that exist, in one query (GraphQL batches its lookups through this). */
    byIds: repo.byIds,

    /** The device linked to an API key, if any: GPS points sent with that key belong to it. */
    byApiKey: repo.byApiKey,
    /** The devices that report with these API keys (a user's own, for their data export). */
    ofApiKeys: repo.ofApiKeys,

    create: (caller: Caller, input: Static<typeof CreateDeviceBody>) =>
      save(caller, input, (trx, fields) => repo.insert(trx, { ...fields, name: input.name })),

    update: (caller: Caller, id: string, input: Static<typeof UpdateDeviceBody>) => save(caller, input, (trx, fields) => repo.update(trx, id, fields)),

    /** Its points stay without device; the latest-point cache is told (device.deleted). */
    async remove(id: string) {
      if (!(await repo.delete(id))) throw DeviceErrors.not_found();
      await deps.events.emit('device.deleted', { deviceId: id });
    },
  };
}

export type DevicesService = ReturnType<typeof createDevicesService>;
