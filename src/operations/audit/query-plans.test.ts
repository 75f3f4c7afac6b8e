import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, planOf } from '../../../test/helpers.js';
import type { Database } from '../../platform/db/database.js';
import { auditQueries } from './repo.js';

/**
 * The activity log's reads must be index range scans at any size (bench/audit-scale.js measures them at 10 M
 * events). audit_events is partitioned by month (migration 0038): each partition has its own copy of each index,
 * and a read in time order goes through the months one after the other (an Append, never a Merge Append that
 * opens them all), so a LIMIT stops in the newest months that hold enough events; a time range or a report's
 * key opens only its months. Sequential scans, bitmaps and full sorts are priced out, as in the GPS plan tests;
 * the tie by id is an Incremental Sort over rows already in time order.
 */
const SOME_ID = '00000000-0000-4000-8000-000000000000';
const NEWEST = { field: 'created_at', direction: 'desc' } as const;
const FULL_SORT = /(?<!Incremental )Sort(?! Key)/;

/** The first day of next month (UTC), and the partition that holds it. */
function nextMonth(): { start: Date; partition: string } {
  const now = new Date();
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  return {
    start,
    partition: `audit_events_y${start.getUTCFullYear()}m${String(start.getUTCMonth() + 1).padStart(2, '0')}`,
  };
}

const partitionsIn = (plan: string) =>
  [...plan.matchAll(/ on (audit_events_\w+) audit_events/g)].map((match) => match[1]);

describe('audit query plans', () => {
  let database: Database;
  beforeAll(async () => {
    database = await openTestDatabase();
  });
  afterAll(() => database.close());

  const audit = () => auditQueries(database.db);
  const plan = (query: Parameters<typeof planOf>[1]) =>
    planOf(database, query, ['enable_seqscan', 'enable_bitmapscan', 'enable_sort']);

  it.each([
    ['the newest events', () => audit().page({}, NEWEST, 50, 0), /Index Scan using audit_events_\w+_created_at_idx/],
    [
      "a user's own activity",
      () => audit().page({ userIds: [SOME_ID] }, NEWEST, 50, 0),
      /Index Scan Backward using audit_events_\w+_user_id_created_at_idx/,
    ],
    [
      'events of a type',
      () => audit().page({ eventType: 'user_updated' }, NEWEST, 50, 0),
      /Index Scan Backward using audit_events_\w+_event_type_created_at_idx/,
    ],
    [
      'failures, oldest first',
      () => audit().page({ status: 'failure' }, { field: 'created_at', direction: 'asc' }, 50, 0),
      /Index Scan using audit_events_\w+_status_created_at_idx/,
    ],
  ])('reads %s month after month from an index', async (_what, query, index) => {
    const text = await plan(query());
    expect(text).toMatch(index);
    expect(text).not.toContain('Seq Scan');
    expect(text).not.toMatch(FULL_SORT);
    expect(text).not.toContain('Merge Append');
  });

  it('reads a time range from the months it covers only', async () => {
    const { start, partition } = nextMonth();
    const text = await plan(audit().page({ from: start, to: new Date(start.getTime() + 86_400_000) }, NEWEST, 50, 0));
    expect(partitionsIn(text)).toEqual([partition]);
    expect(text).toMatch(/Index Scan using audit_events_\w+_created_at_idx/);
  });

  it("reads a report's event by its key, and an event by id alone from each month's index", async () => {
    // The report's key bounds each month's index probe, and PostgreSQL skips the months it cannot be in when it
    // runs (run-time pruning: "never executed" in EXPLAIN ANALYZE).
    const ofReport = await plan(audit().eventOfReport(SOME_ID));
    expect(ofReport).toMatch(
      /Nested Loop[\s\S]*Index Scan using audit_reports_pkey[\s\S]*Index Cond: \(\(?created_at = audit_reports\.audit_event_created_at/,
    );
    expect(ofReport).not.toContain('Seq Scan');
    const byId = await plan(audit().eventOfUser(SOME_ID, SOME_ID));
    expect(byId).not.toContain('Seq Scan');
    expect(byId.match(/Index Scan/g)?.length).toBe(partitionsIn(byId).length);
  });

  it('sorts by another column through every month, still from indexes', async () => {
    const text = await plan(audit().page({}, { field: 'event_type', direction: 'asc' }, 50, 0));
    expect(text).toMatch(/Merge Append[\s\S]*Index Scan using audit_events_\w+_event_type_created_at_idx/);
    expect(text).not.toContain('Seq Scan');
    expect(text).not.toMatch(FULL_SORT);
  });
});
