import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, planOf } from '../../../test/helpers.js';
import type { Database } from '../../platform/db/database.js';
import { gpsQueries } from './repo.js';

/**
 * The hot GPS queries must be answerable from an index, whatever the table size. With a
 * small test table the planner would rightly prefer a sequential scan (or a scan plus a
 * sort), so those are priced out for the check: the plan must then walk an index in the
 * wanted order, with no sort step, which is what keeps these queries fast at 10 million rows.
 * gps_points is partitioned by month (migration 0035): each partition has its own copy of each
 * index (named after the partition and the columns), and the partitions are read one after the
 * other in time order (an Append, never a Merge Append that opens them all), so a LIMIT stops in
 * the first month that has the rows.
 */
const INDEX = {
  same_fix: /Index Scan (Backward )?using gps_points_\w+_device_id_timestamp_latitude_longitude_idx/,
  time_id: /Index Scan (Backward )?using gps_points_\w+(?<!_trip_id)(?<!_sent_by)_timestamp_id_idx/,
  trip_time_id: /Index Scan using gps_points_\w+_trip_id_timestamp_id_idx/,
};

describe('GPS query plans', () => {
  let database: Database;
  beforeAll(async () => {
    database = await openTestDatabase();
  });
  afterAll(() => database.close());

  const SOME_ID = '00000000-0000-4000-8000-000000000000';
  const gps = () => gpsQueries(database.db);

  const AFTER = { after: { at: new Date('2026-01-01T00:00:00Z'), id: SOME_ID } };

  it.each([
    ['the latest point of a device', () => gps().latest(SOME_ID), [INDEX.same_fix]],
    ['the latest point overall', () => gps().latest(), [INDEX.time_id]],
    [
      'the latest point of every device',
      () => gps().latestPerDevice([SOME_ID, '00000000-0000-4000-8000-000000000001']),
      [INDEX.same_fix],
    ],
    ['a numbered page of points, newest first', () => gps().page(10, { offset: 20 }), [INDEX.time_id]],
    [
      'the page of points after a cursor, newest first',
      () => gps().page(10, AFTER),
      [INDEX.time_id, 'AND (ROW("timestamp", id) < ROW('],
    ],
    [
      "a numbered page of a trip's points by time",
      () => gps().tripPage(SOME_ID, 10, { offset: 20 }),
      [INDEX.trip_time_id],
    ],
    [
      "the page of a trip's points after a cursor",
      () => gps().tripPage(SOME_ID, 10, AFTER),
      [INDEX.trip_time_id, 'ROW("timestamp", id) > ROW('],
    ],
  ])('reads %s from an index', async (what, query, indexes) => {
    const plan = await planOf(database, query(), ['enable_seqscan', 'enable_bitmapscan', 'enable_sort']);
    for (const index of indexes) expect(plan).toMatch(index);
    // No sort at all: each order, ties by id included, is an index's order, and months are read in turn.
    expect(plan).not.toMatch(/Sort\b(?! Key)/);
    expect(plan).not.toContain('Merge Append');
    // A cursor's key bounds the index scan (Index Cond), not a filter over the rows walked past.
    expect(plan).not.toContain('Filter: (ROW(');
    // One index probe per device, not a walk over every point.
    if (what === 'the latest point of every device')
      expect(plan).toMatch(
        /Limit[\s\S]*Index Scan (Backward )?using gps_points_\w+_device_id_timestamp_latitude_longitude_idx/,
      );
  });

  it('opens only the months on the near side of a cursor', async () => {
    const older = await planOf(database, gps().page(10, AFTER), ['enable_seqscan', 'enable_bitmapscan', 'enable_sort']);
    // Newest first after 2026-01-01: no month after it is in the plan, only what can hold older points.
    expect(older).not.toMatch(/on gps_points_y2026m0[2-9]|on gps_points_y202[7-9]|on gps_points_after/);
    expect(older).toContain('on gps_points_before');
  });
});
