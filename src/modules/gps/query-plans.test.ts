import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase } from '../../../test/helpers.js';
import type { Database } from '../../platform/db/database.js';

/**
 * The hot GPS queries must be answerable from an index, whatever the table size. With a
 * small test table the planner would rightly prefer a sequential scan (or a scan plus a
 * sort), so those are priced out for the check: the plan must then walk an index in the
 * wanted order, with no sort step, which is what keeps these queries fast at 10 million rows.
 */
describe('GPS query plans', () => {
  let database: Database;
  beforeAll(async () => {
    database = await openTestDatabase();
  });
  afterAll(() => database.close());

  async function planOf(query: string): Promise<string> {
    return database.db.transaction().execute(async (trx) => {
      for (const setting of ['enable_seqscan', 'enable_bitmapscan', 'enable_sort']) await sql.raw(`set local ${setting} = off`).execute(trx);
      const { rows } = await sql<{ 'QUERY PLAN': string }>`${sql.raw(`explain ${query}`)}`.execute(trx);
      return rows.map((row) => row['QUERY PLAN']).join('\n');
    });
  }

  it.each([
    ['the latest point of a device', `select * from gps_points where device_id = '00000000-0000-4000-8000-000000000000' order by "timestamp" desc limit 1`, 'gps_points_device_time'],
    ['the latest point overall', `select * from gps_points order by "timestamp" desc limit 1`, 'gps_points_time'],
    ['the points of a trip by time', `select * from gps_points where trip_id = '00000000-0000-4000-8000-000000000000' order by "timestamp" limit 10`, 'gps_points_trip_time'],
    ['the latest point per device', `select distinct on (device_id) * from gps_points where device_id is not null order by device_id, "timestamp" desc`, 'gps_points_device_time'],
  ])('reads %s from an index', async (_what, query, index) => {
    const plan = await planOf(query);
    expect(plan).toContain(index);
    expect(plan).not.toMatch(/Sort\b(?! Key)/);
  });
});
