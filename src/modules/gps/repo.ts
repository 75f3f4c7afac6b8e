import { sql, type Kysely } from 'kysely';
import type { Schema } from '../../platform/db/schema.js';

export const GPS_COLUMNS = [
  'id',
  'device_id',
  'trip_id',
  'latitude',
  'longitude',
  'altitude',
  'heading',
  'timestamp',
  'speed_kmh',
  'speed_mps',
  'speed_mph',
  'speed_knots',
  'pdop',
  'hdop',
  'vdop',
  'created_at',
] as const;

export type NewGpsPoint = Omit<Schema['gps_points'], 'id' | 'created_at'> & { timestamp: Date };

export function createGpsRepo(db: Kysely<Schema>) {
  return {
    async page(limit: number, offset: number) {
      const [rows, count] = await Promise.all([
        db.selectFrom('gps_points').select(GPS_COLUMNS).orderBy('timestamp', 'desc').orderBy('id').limit(limit).offset(offset).execute(),
        db.selectFrom('gps_points').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return { rows, total: Number(count.n) };
    },

    get: (id: string) => db.selectFrom('gps_points').select(GPS_COLUMNS).where('id', '=', id).executeTakeFirst(),

    insert: (point: NewGpsPoint) => db.insertInto('gps_points').values(point).returning(GPS_COLUMNS).executeTakeFirstOrThrow(),

    /** The newest point overall, or of one device (walks gps_points_time / gps_points_device_time). */
    latest(deviceId?: string) {
      let query = db.selectFrom('gps_points').select(GPS_COLUMNS).orderBy('timestamp', 'desc').limit(1);
      if (deviceId !== undefined) query = query.where('device_id', '=', deviceId);
      return query.executeTakeFirst();
    },

    /** The newest point of every device. */
    latestPerDevice: () =>
      db
        .selectFrom('gps_points')
        .select(GPS_COLUMNS)
        .distinctOn('device_id')
        .where('device_id', 'is not', null)
        .orderBy('device_id')
        .orderBy('timestamp', 'desc')
        .execute(),

    /** Deletes a point that no trip holds; reports what stood in the way otherwise. */
    async deleteUnlinked(id: string): Promise<'deleted' | 'missing' | 'linked'> {
      const result = await db.deleteFrom('gps_points').where('id', '=', id).where('trip_id', 'is', null).returning('device_id').executeTakeFirst();
      if (result) return 'deleted';
      const exists = await db.selectFrom('gps_points').select(sql<number>`1`.as('one')).where('id', '=', id).executeTakeFirst();
      return exists ? 'linked' : 'missing';
    },
  };
}
