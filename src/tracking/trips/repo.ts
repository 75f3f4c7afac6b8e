import type { Expression, ExpressionBuilder, Kysely, Updateable } from 'kysely';
import type { Schema, TripStatus } from '../../platform/db/schema/index.js';

export const TRIP_COLUMNS = [
  'id',
  'name',
  'description',
  'status',
  'gps_logging_enabled',
  'device_id',
  'category_id',
  'origin_id',
  'destination_id',
  'weight_kg',
  'notes',
  'tags',
  'start_latitude',
  'start_longitude',
  'end_latitude',
  'end_longitude',
  'started_at',
  'ended_at',
  'created_at',
  'updated_at',
] as const;

export type TripFields = Omit<Updateable<Schema['trips']>, 'id' | 'created_at' | 'updated_at'>;

/**
 * The trips a self-service user reaches (docs/sharing.md): their own, and those of these devices (reached at
 * `full` to read, owned to change). Undefined: every trip (the global permission).
 */
export interface TripFilter {
  userId: string;
  deviceIds: string[];
}

const reachedBy =
  ({ userId, deviceIds }: TripFilter) =>
  (eb: ExpressionBuilder<Schema, 'trips'>) =>
    eb.or([eb('owner_id', '=', userId), ...(deviceIds.length > 0 ? [eb('device_id', 'in', deviceIds)] : [])]);

export function createTripsRepo(db: Kysely<Schema>) {
  return {
    async page(limit: number, offset: number, status?: TripStatus, filter?: TripFilter) {
      let rows = db
        .selectFrom('trips')
        .select(TRIP_COLUMNS)
        .orderBy('created_at', 'desc')
        .orderBy('id')
        .limit(limit)
        .offset(offset);
      let count = db.selectFrom('trips').select((eb) => eb.fn.countAll<number>().as('n'));
      if (status) {
        rows = rows.where('status', '=', status);
        count = count.where('status', '=', status);
      }
      if (filter) {
        rows = rows.where(reachedBy(filter));
        count = count.where(reachedBy(filter));
      }
      const [data, total] = await Promise.all([rows.execute(), count.executeTakeFirstOrThrow()]);
      return { rows: data, total: Number(total.n) };
    },

    get: (id: string, filter?: TripFilter) =>
      db
        .selectFrom('trips')
        .select(TRIP_COLUMNS)
        .where('id', '=', id)
        .$if(filter !== undefined, (query) => query.where(reachedBy(filter!)))
        .executeTakeFirst(),

    /** The trip row, locked until the transaction ends, so status changes of one trip run one at a time. */
    getForUpdate: (trx: Kysely<Schema>, id: string) =>
      trx.selectFrom('trips').select(TRIP_COLUMNS).where('id', '=', id).forUpdate().executeTakeFirst(),

    insert: (fields: TripFields & { name: string }, executor: Kysely<Schema> = db) =>
      executor.insertInto('trips').values(fields).returning(TRIP_COLUMNS).executeTakeFirstOrThrow(),

    update: (trx: Kysely<Schema>, id: string, fields: TripFields) =>
      trx
        .updateTable('trips')
        .set({ ...fields, updated_at: new Date() })
        .where('id', '=', id)
        .returning(TRIP_COLUMNS)
        .executeTakeFirstOrThrow(),

    /** Another trip that is active and logging GPS on this device, if any. */
    otherLoggingTrip: (trx: Kysely<Schema>, deviceId: string, tripId: string) =>
      trx
        .selectFrom('trips')
        .select('id')
        .where('device_id', '=', deviceId)
        .where('status', '=', 'active')
        .where('gps_logging_enabled', '=', true)
        .where('id', '!=', tripId)
        .executeTakeFirst(),

    /**
     * The active GPS-logging trip of a device (new points of the device belong to it), as a subquery a batch
     * of new points runs inside its insert (see gps/point-writer.ts). It locks the trip as the point-count
     * trigger will lock it anyway (a share lock would deadlock with that trigger's update), so completing the
     * trip waits for the insert's commit, and a trip completed meanwhile gains no point. `deviceId` may be a
     * column of the insert's rows (one subquery per row of a batch).
     */
    loggingTripOf: (deviceId: string | Expression<string | null>) =>
      db
        .selectFrom('trips')
        .select('id')
        .where('device_id', '=', deviceId)
        .where('status', '=', 'active')
        .where('gps_logging_enabled', '=', true)
        .forNoKeyUpdate(),

    addHistory: (trx: Kysely<Schema>, entry: Omit<Schema['trip_status_history'], 'id' | 'changed_at'>) =>
      trx.insertInto('trip_status_history').values(entry).execute(),

    history: (tripId: string) =>
      db
        .selectFrom('trip_status_history')
        .selectAll()
        .where('trip_id', '=', tripId)
        .orderBy('changed_at')
        .orderBy('id')
        .execute(),

    /** How many points the trip has (a trigger on gps_points keeps the count); undefined for no such trip. */
    async pointCount(tripId: string): Promise<number | undefined> {
      const trip = await db.selectFrom('trips').select('gps_point_count').where('id', '=', tripId).executeTakeFirst();
      return trip && Number(trip.gps_point_count);
    },

    countByStatus: () =>
      db
        .selectFrom('trips')
        .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
        .groupBy('status')
        .execute(),

    /** Deletes the trip (the caller has checked it is settled, under its row lock); its points stay, without trip. */
    delete: (trx: Kysely<Schema>, id: string) => trx.deleteFrom('trips').where('id', '=', id).execute(),
  };
}
