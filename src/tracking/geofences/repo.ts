import type { ExpressionBuilder, Kysely } from 'kysely';
import type { Schema } from '../../platform/db/schema/index.js';
import type { PolygonGeometry } from './geometry.js';

const COLUMNS = [
  'id',
  'name',
  'description',
  'latitude',
  'longitude',
  'radius_km',
  'is_active',
  'metadata',
  'polygon',
  'dwell_minutes',
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
  polygon?: PolygonGeometry | null;
  dwell_minutes?: number | null;
}

/** The makers whose geofences a self-service user reaches (undefined: every geofence, the global permission). */
export type GeofenceOwners = string[] | undefined;

const ownedBy = (owners: string[]) => (eb: ExpressionBuilder<Schema, 'geofences'>) => eb('owner_id', 'in', owners);

/** metadata and polygon are jsonb: written as JSON text so both database drivers store the object as sent. */
const toRow = <T extends GeofenceFields>({ metadata, polygon, ...fields }: T) => ({
  ...fields,
  ...(metadata === undefined ? {} : { metadata: JSON.stringify(metadata) }),
  ...(polygon === undefined ? {} : { polygon: polygon === null ? null : JSON.stringify(polygon) }),
});

export function createGeofencesRepo(db: Kysely<Schema>) {
  return {
    async page(limit: number, offset: number, owners?: GeofenceOwners) {
      const [rows, count] = await Promise.all([
        db
          .selectFrom('geofences')
          .select(COLUMNS)
          .$if(owners !== undefined, (query) => query.where(ownedBy(owners!)))
          .orderBy('created_at', 'desc')
          .orderBy('id')
          .limit(limit)
          .offset(offset)
          .execute(),
        db
          .selectFrom('geofences')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .$if(owners !== undefined, (query) => query.where(ownedBy(owners!)))
          .executeTakeFirstOrThrow(),
      ]);
      return { rows, total: Number(count.n) };
    },

    get: (id: string, owners?: GeofenceOwners) =>
      db
        .selectFrom('geofences')
        .select([...COLUMNS, 'owner_id'])
        .where('id', '=', id)
        .$if(owners !== undefined, (query) => query.where(ownedBy(owners!)))
        .executeTakeFirst(),

    /** How many geofences the user made. */
    countOf: async (ownerId: string) =>
      Number(
        (
          await db
            .selectFrom('geofences')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('owner_id', '=', ownerId)
            .executeTakeFirstOrThrow()
        ).n,
      ),

    /**
     * Which of these geofences exist, locked against deletion until `trx` ends (`for key share`): the events of a
     * batch refer to them, and one deleted since the index was read must not fail the batch's insert.
     */
    existing: async (trx: Kysely<Schema>, ids: readonly string[]) =>
      new Set(
        (await trx.selectFrom('geofences').select('id').where('id', 'in', ids).forKeyShare().execute()).map(
          (row) => row.id,
        ),
      ),

    /** Every active geofence, with what evaluating points needs (the events module's index). */
    active: () =>
      db
        .selectFrom('geofences')
        .select(['id', 'name', 'owner_id', 'latitude', 'longitude', 'radius_km', 'polygon', 'dwell_minutes'])
        .where('is_active', '=', true)
        .orderBy('created_at')
        .orderBy('id')
        .execute(),

    insert: (
      fields: GeofenceFields & { name: string; latitude: number; longitude: number; radius_km: number },
      ownerId: string | null,
    ) =>
      db
        .insertInto('geofences')
        .values({ ...toRow(fields), owner_id: ownerId })
        .returning(COLUMNS)
        .executeTakeFirstOrThrow(),

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
