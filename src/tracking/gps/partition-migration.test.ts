import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseBefore, type Migrating } from '../../../test/migrating.js';

const PARTITIONING = '0035';

/** Migration 0035 turns a filled gps_points into monthly partitions: every point once, trip counts unchanged. */
describe('migrating GPS points to monthly partitions', () => {
  let migrating: Migrating;
  beforeAll(async () => {
    migrating = await databaseBefore(PARTITIONING);
  }, 120_000);
  afterAll(() => migrating?.close());

  it('keeps every point once, with its trip count, and reads them from their months', async () => {
    const { db } = migrating.database;
    const device = await db
      .insertInto('devices')
      .values({ name: 'old tracker' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const trip = await db
      .insertInto('trips')
      .values({ name: 'old trip', device_id: device.id })
      .returning('id')
      .executeTakeFirstOrThrow();
    // Three years of points, one a day at noon UTC, every tenth on the trip, and one without a device.
    const start = Date.UTC(2023, 0, 1, 12);
    await sql`
      insert into gps_points (device_id, trip_id, latitude, longitude, "timestamp", speed_kmh, speed_mps, speed_mph, speed_knots)
      select ${device.id}::uuid, case when day % 10 = 0 then ${trip.id}::uuid end, 54, 10, ${new Date(start)}::timestamptz + make_interval(days => day), 1, 1, 1, 1
      from generate_series(0, 1094) as day
      union all
      select null, null, 53, 9, ${new Date(start)}::timestamptz, null, null, null, null`.execute(db);
    const snapshot = () =>
      sql<{
        id: string;
        trip_id: string | null;
        timestamp: Date;
      }>`select id, trip_id, "timestamp" from gps_points order by id`.execute(db);
    const before = (await snapshot()).rows;
    const tripCount = async () =>
      (await db.selectFrom('trips').select('gps_point_count').where('id', '=', trip.id).executeTakeFirstOrThrow())
        .gps_point_count;
    expect(await tripCount()).toBe(110);

    expect(await migrating.migrateIt()).toEqual([PARTITIONING]);

    expect((await snapshot()).rows).toEqual(before);
    expect(await tripCount()).toBe(110);
    // A month per month of points (36), none before them, up to three months after this one.
    const months = (
      await sql<{ partition: string }>`select partition::text from gps_points_months()`.execute(db)
    ).rows.map((row) => row.partition);
    expect(months.slice(0, 2)).toEqual(['gps_points_y2023m01', 'gps_points_y2023m02']);
    expect(months).toContain('gps_points_y2025m12');
    const counts = (
      await sql<{
        partition: string;
        n: number;
      }>`select tableoid::regclass::text as partition, count(*)::int as n from gps_points group by 1 order by 1`.execute(
        db,
      )
    ).rows;
    expect(counts.find((row) => row.partition === 'gps_points_y2023m01')).toEqual({
      partition: 'gps_points_y2023m01',
      n: 32,
    });
    expect(counts.some((row) => row.partition === 'gps_points_before' || row.partition === 'gps_points_after')).toBe(
      false,
    );
    // The rule of idempotent delivery holds on the new table: the same fix again is a conflict.
    const resent =
      await sql`insert into gps_points (device_id, latitude, longitude, "timestamp", speed_kmh, speed_mps, speed_mph, speed_knots)
      values (${device.id}, 54, 10, ${new Date(start)}, 1, 1, 1, 1) on conflict (device_id, "timestamp", latitude, longitude) do nothing returning id`.execute(
        db,
      );
    expect(resent.rows).toEqual([]);
    // A new point on the trip is counted by the trigger, as before.
    await db
      .insertInto('gps_points')
      .values({
        device_id: device.id,
        trip_id: trip.id,
        latitude: 1,
        longitude: 1,
        timestamp: new Date(),
        speed_kmh: 1,
        speed_mps: 1,
        speed_mph: 1,
        speed_knots: 1,
      })
      .execute();
    expect(await tripCount()).toBe(111);
  }, 60_000);
});
