import type { Kysely } from 'kysely';
import type { Schema } from '../../platform/db/schema/index.js';

const COLUMNS = [
  'id',
  'name',
  'description',
  'device_type',
  'is_active',
  'is_public',
  'api_key_id',
  'created_at',
  'updated_at',
] as const;

export interface DeviceFields {
  name?: string;
  description?: string | null;
  device_type?: string | null;
  is_active?: boolean;
  is_public?: boolean;
}

export function createDevicesRepo(db: Kysely<Schema>) {
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

    get: (id: string) => db.selectFrom('devices').select(COLUMNS).where('id', '=', id).executeTakeFirst(),

    byIds: (ids: readonly string[]) =>
      ids.length === 0
        ? Promise.resolve([])
        : db
            .selectFrom('devices')
            .select(COLUMNS)
            .where('id', 'in', [...ids])
            .execute(),

    ofApiKeys: (apiKeyIds: string[]) =>
      apiKeyIds.length === 0
        ? Promise.resolve([])
        : db.selectFrom('devices').select(COLUMNS).where('api_key_id', 'in', apiKeyIds).orderBy('created_at').execute(),

    /** The device an API key reports to: what a new point of that key needs of it. */
    byApiKey: (apiKeyId: string) =>
      db.selectFrom('devices').select(['id', 'is_public']).where('api_key_id', '=', apiKeyId).executeTakeFirst(),

    /** The key a device reports with, read in a write's transaction (its cached device must be forgotten). */
    keyOf: async (trx: Kysely<Schema>, id: string) =>
      (await trx.selectFrom('devices').select('api_key_id').where('id', '=', id).executeTakeFirst())?.api_key_id ??
      null,

    insert: (trx: Kysely<Schema>, fields: DeviceFields & { name: string }) =>
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
    async delete(id: string): Promise<{ api_key_id: string | null } | undefined> {
      return db.deleteFrom('devices').where('id', '=', id).returning('api_key_id').executeTakeFirst();
    },
  };
}
