import type { Kysely } from 'kysely';
import type { Schema } from '../../platform/db/schema/index.js';

const COLUMNS = ['id', 'name', 'description', 'device_type', 'is_active', 'is_public', 'api_key_id', 'created_at', 'updated_at'] as const;

export interface DeviceFields {
  name?: string;
  description?: string | null;
  device_type?: string | null;
  is_active?: boolean;
  is_public?: boolean;
}

export function createDevicesRepo(db: Kysely<Schema>) {
  const count = async () => Number((await db.selectFrom('devices').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  return {
    ids: async () => (await db.selectFrom('devices').select('id').execute()).map((row) => row.id),

    count,

    async page(limit: number, offset: number) {
      const [rows, total] = await Promise.all([
        db.selectFrom('devices').select(COLUMNS).orderBy('created_at', 'desc').orderBy('id').limit(limit).offset(offset).execute(),
        count(),
      ]);
      return { rows, total };
    },

    get: (id: string) => db.selectFrom('devices').select(COLUMNS).where('id', '=', id).executeTakeFirst(),

    byIds: (ids: readonly string[]) =>
      ids.length === 0 ? Promise.resolve([]) : db.selectFrom('devices').select(COLUMNS).where('id', 'in', [...ids]).execute(),

    ofApiKeys: (apiKeyIds: string[]) =>
      apiKeyIds.length === 0 ? Promise.resolve([]) : db.selectFrom('devices').select(COLUMNS).where('api_key_id', 'in', apiKeyIds).orderBy('created_at').execute(),

    byApiKey: (apiKeyId: string) => db.selectFrom('devices').select(['id', 'is_active']).where('api_key_id', '=', apiKeyId).executeTakeFirst(),

    insert: (trx: Kysely<Schema>, fields: DeviceFields & { name: string }) =>
      trx.insertInto('devices').values(fields).returning(COLUMNS).executeTakeFirstOrThrow(),

    update: (trx: Kysely<Schema>, id: string, fields: DeviceFields) =>
      trx.updateTable('devices').set({ ...fields, updated_at: new Date() }).where('id', '=', id).returning(COLUMNS).executeTakeFirst(),

    /** Links the key to this device only: it leaves any other device, and this device's previous key is unlinked. */
    async linkKey(trx: Kysely<Schema>, deviceId: string, apiKeyId: string) {
      await trx.updateTable('devices').set({ api_key_id: null }).where('api_key_id', '=', apiKeyId).where('id', '!=', deviceId).execute();
      return trx.updateTable('devices').set({ api_key_id: apiKeyId, updated_at: new Date() }).where('id', '=', deviceId).returning(COLUMNS).executeTakeFirstOrThrow();
    },

    async delete(id: string): Promise<boolean> {
      const result = await db.deleteFrom('devices').where('id', '=', id).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}
