import type { Kysely } from 'kysely';
import type { DeviceIcon, Schema } from '../../platform/db/schema/index.js';

const COLUMNS = [
  'id',
  'name',
  'description',
  'device_type',
  'is_active',
  'is_public',
  'color',
  'icon',
  'api_key_id',
  'owner_id',
  'offline_after_minutes',
  'speed_limit_kmh',
  'created_at',
  'updated_at',
] as const;

export interface DeviceFields {
  name?: string;
  owner_id?: string | null;
  description?: string | null;
  device_type?: string | null;
  is_active?: boolean;
  is_public?: boolean;
  color?: string | null;
  icon?: DeviceIcon;
  offline_after_minutes?: number | null;
  speed_limit_kmh?: number | null;
}

export function createDevicesRepo(db: Kysely<Schema>) {
  const countOf = async (ids: readonly string[]) =>
    Number(
      (
        await db
          .selectFrom('devices')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('id', 'in', ids)
          .executeTakeFirstOrThrow()
      ).n,
    );
  const count = async () =>
    Number(
      (
        await db
          .selectFrom('devices')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  return {
    ids: async () => (await db.selectFrom('devices').select('id').execute()).map((row) => row.id),

    count,

    async page(limit: number, offset: number) {
      const [rows, total] = await Promise.all([
        db
          .selectFrom('devices')
          .select(COLUMNS)
          .orderBy('created_at', 'desc')
          .orderBy('id')
          .limit(limit)
          .offset(offset)
          .execute(),
        count(),
      ]);
      return { rows, total };
    },

    /** A page of these devices (a self-service user's own and shared ones), newest first, and their total. */
    async pageOf(ids: readonly string[], limit: number, offset: number) {
      if (ids.length === 0) return { rows: [], total: 0 };
      const rows = await db
        .selectFrom('devices')
        .select(COLUMNS)
        .where('id', 'in', ids)
        .orderBy('created_at', 'desc')
        .orderBy('id')
        .limit(limit)
        .offset(offset)
        .execute();
      // Only ids that name a device now: a deleted one may linger in a cached list for a moment.
      const total = offset === 0 && rows.length < limit ? rows.length : await countOf(ids);
      return { rows, total };
    },

    /**
     * Up to `limit` devices (of these ids, or every one), in the order of their ids, past the id `after`, and
     * whether more follow (read as one row past the limit). A range of the primary key: any page costs the same.
     */
    async chunk(ids: readonly string[] | null, limit: number, after: string | undefined) {
      if (ids?.length === 0) return { rows: [], more: false };
      let query = db.selectFrom('devices').select(COLUMNS);
      if (ids) query = query.where('id', 'in', ids);
      if (after) query = query.where('id', '>', after);
      const rows = await query
        .orderBy('id')
        .limit(limit + 1)
        .execute();
      return { rows: rows.slice(0, limit), more: rows.length > limit };
    },

    /** The devices these users own. */
    ownedBy: (ownerIds: string[]) =>
      ownerIds.length === 0
        ? Promise.resolve([])
        : db.selectFrom('devices').select(['id', 'owner_id']).where('owner_id', 'in', ownerIds).execute(),

    /** The device's owner, read (and locked) in a handover's transaction; undefined: no such device. */
    ownerIn: async (trx: Kysely<Schema>, id: string) =>
      (await trx.selectFrom('devices').select('owner_id').where('id', '=', id).forUpdate().executeTakeFirst())
        ?.owner_id,

    /** Hands the device to another user, in the handover's transaction. */
    transfer: (trx: Kysely<Schema>, id: string, ownerId: string) =>
      trx
        .updateTable('devices')
        .set({ owner_id: ownerId, updated_at: new Date() })
        .where('id', '=', id)
        .returning(COLUMNS)
        .executeTakeFirst(),

    get: (id: string) => db.selectFrom('devices').select(COLUMNS).where('id', '=', id).executeTakeFirst(),

    byIds: (ids: readonly string[]) =>
      ids.length === 0
        ? Promise.resolve([])
        : db
            .selectFrom('devices')
            .select(COLUMNS)
            .where('id', 'in', [...ids])
            .execute(),

    /** Every device a user owns, oldest first. */
    ofOwner: (ownerId: string) =>
      db.selectFrom('devices').select(COLUMNS).where('owner_id', '=', ownerId).orderBy('created_at').execute(),

    ofApiKeys: (apiKeyIds: string[]) =>
      apiKeyIds.length === 0
        ? Promise.resolve([])
        : db.selectFrom('devices').select(COLUMNS).where('api_key_id', 'in', apiKeyIds).orderBy('created_at').execute(),

    /** The device an API key reports to: what a new point of that key needs of it. */
    byApiKey: (apiKeyId: string) =>
      db.selectFrom('devices').select(['id', 'is_public']).where('api_key_id', '=', apiKeyId).executeTakeFirst(),

    /**
     * The key a device reports with (null: none), its row locked until the transaction ends; undefined: no such
     * device.
     */
    lockedKeyOf: async (trx: Kysely<Schema>, id: string) =>
      (await trx.selectFrom('devices').select('api_key_id').where('id', '=', id).forUpdate().executeTakeFirst())
        ?.api_key_id,

    /** The key a device reports with, read in a write's transaction (its cached device must be forgotten). */
    keyOf: async (trx: Kysely<Schema>, id: string) =>
      (await trx.selectFrom('devices').select('api_key_id').where('id', '=', id).executeTakeFirst())?.api_key_id ??
      null,

    insert: (trx: Kysely<Schema>, fields: DeviceFields & { name: string; owner_id: string | null }) =>
      trx.insertInto('devices').values(fields).returning(COLUMNS).executeTakeFirstOrThrow(),

    update: (trx: Kysely<Schema>, id: string, fields: DeviceFields) =>
      trx
        .updateTable('devices')
        .set({ ...fields, updated_at: new Date() })
        .where('id', '=', id)
        .returning(COLUMNS)
        .executeTakeFirst(),

    /** Links the key to this device only: it leaves any other device, and this device's previous key is unlinked. */
    async linkKey(trx: Kysely<Schema>, deviceId: string, apiKeyId: string) {
      await trx
        .updateTable('devices')
        .set({ api_key_id: null })
        .where('api_key_id', '=', apiKeyId)
        .where('id', '!=', deviceId)
        .execute();
      return trx
        .updateTable('devices')
        .set({ api_key_id: apiKeyId, updated_at: new Date() })
        .where('id', '=', deviceId)
        .returning(COLUMNS)
        .executeTakeFirstOrThrow();
    },

    /** The deleted device's key (null: it had none), or undefined when there was no such device. */
    async delete(trx: Kysely<Schema>, id: string): Promise<{ api_key_id: string | null } | undefined> {
      return trx.deleteFrom('devices').where('id', '=', id).returning(['api_key_id']).executeTakeFirst();
    },
  };
}
