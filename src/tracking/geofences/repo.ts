import type { Kysely } from 'kysely';
import type { Schema } from '../../platform/db/schema/index.js';

const COLUMNS = [
  'id',
  'name',
  'description',
  'latitude',
  'longitude',
  'radius_km',
  'is_active',
  'metadata',
  'created_at',
  'updated_at',
] as const;

export interface GeofenceFields {
  name?: string;
  description?: string | null;
  latitude?: number;
  longitude?: number;
  radius_km?: number;
  is_active?: boolean;
  metadata?: Record<string, unknown>;
}

/** metadata is jsonb: written as JSON text so both database drivers store the object as sent. */
const toRow = <T extends GeofenceFields>({ metadata, ...fields }: T) => ({
  ...fields,
  ...(metadata === undefined ? {} : { metadata: JSON.stringify(metadata) }),
});

export function createGeofencesRepo(db: Kysely<Schema>) {
  return {
    async page(limit: number, offset: number) {
      const [rows, count] = await Promise.all([
        db
          .selectFrom('geofences')
          .select(COLUMNS)
          .orderBy('created_at', 'desc')
          .orderBy('id')
          .limit(limit)
          .offset(offset)
          .execute(),
        db
          .selectFrom('geofences')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow(),
      ]);
      return { rows, total: Number(count.n) };
    },

    get: (id: string) => db.selectFrom('geofences').select(COLUMNS).where('id', '=', id).executeTakeFirst(),

    insert: (fields: GeofenceFields & { name: string; latitude: number; longitude: number; radius_km: number }) =>
      db.insertInto('geofences').values(toRow(fields)).returning(COLUMNS).executeTakeFirstOrThrow(),

    update: (id: string, fields: GeofenceFields) =>
      db
        .updateTable('geofences')
        .set({ ...toRow(fields), updated_at: new Date() })
        .where('id', '=', id)
        .returning(COLUMNS)
        .executeTakeFirst(),

    async delete(id: string): Promise<boolean> {
      const result = await db.deleteFrom('geofences').where('id', '=', id).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}
