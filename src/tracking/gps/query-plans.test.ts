import { CompiledQuery, sql, type Compilable } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase } from '../../../test/helpers.js';
import type { Database } from '../../platform/db/database.js';
import { gpsQueries } from './repo.js';

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

  /** The plan of a query the code runs, its parameters bound as the code binds them. */
  async function planOf(query: Compilable): Promise<string> {
    return database.db.transaction().execute(async (trx) => {
      for (const setting of ['enable_seqscan', 'enable_bitmapscan', 'enable_sort']) await sql.raw(`set local ${setting} = off`).execute(trx);
      const compiled = query.compile();
      const { rows } = await trx.executeQuery<{ 'QUERY PLAN': string }>(CompiledQuery.raw(`explain ${compiled.sql}`, [...compiled.parameters]));
      return rows.map((row) => row['QUERY PLAN']).join('\n');
    });
  }

  const SOME_ID = '00000000-0000-4000-8000-000000000000';
  const gps = () => gpsQueries(database.db);

  it.each([
    ['the latest point of a device', () => gps().latest(SOME_ID), ['gps_points_device_time']],
    ['the latest point overall', () => gps().latest(), ['gps_points_time']],
    ['the latest point of every device', () => gps().latestPerDevice([SOME_ID, '00000000-0000-4000-8000-000000000001']), ['gps_points_device_time']],
    ['a page of points, newest first', () => gps().page(10, 0), ['gps_points_time']],
    ['a page of a trip\'s points by time', () => gpsQueries(database.db).tripPage(SOME_ID, 10, 0), ['gps_points_trip_time']],
  ])('reads %s from an index', async (what, query, indexes) => {
    const plan = await planOf(query());
    for (const index of indexes) expect(plan).toContain(index);
    // No full sort. An incremental sort, which orders only rows of equal timestamp by id, is fine.
    expect(plan).not.toMatch(/(?<!Incremental )Sort\b(?! Key)/);
    // One index probe per device, not a walk over every point.
    if (what === 'the latest point of every device') expect(plan).toMatch(/Limit[\s\S]*Index Scan using gps_points_device_time/);
  });
});
