import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseBefore, type Migrating } from '../../../test/migrating.js';

const PARTITIONING = '0038';

/** Migration 0038 turns a filled audit_events into monthly partitions: every event once, every report still on its event. */
describe('migrating activity-log events to monthly partitions', () => {
  let migrating: Migrating;
  beforeAll(async () => {
    migrating = await databaseBefore(PARTITIONING);
  }, 120_000);
  afterAll(() => migrating?.close());

  it('keeps every event once and every report on its event, and reads them from their months', async () => {
    const { db } = migrating.database;
    const user = await db
      .insertInto('users')
      .values({ username: 'old_user' })
      .returning('id')
      .executeTakeFirstOrThrow();
    // Two years of events, one a day at noon UTC, of two users; the user reported every hundredth.
    const start = Date.UTC(2024, 0, 1, 12);
    await sql`
      insert into audit_events (user_id, event_type, status, metadata, created_at)
      select case when day % 2 = 0 then ${user.id} else 'someone else' end, 'user_updated', case when day % 7 = 0 then 'failure' else 'success' end,
             jsonb_build_object('day', day), ${new Date(start)}::timestamptz + make_interval(days => day)
      from generate_series(0, 729) as day`.execute(db);
    await sql`
      insert into audit_reports (audit_event_id, user_id, reason)
      select id, ${user.id}::uuid, 'not_me' from audit_events where (metadata->>'day')::int % 100 = 0 and user_id = ${user.id}`.execute(
      db,
    );
    const events = () => sql`select * from audit_events order by id`.execute(db);
    const reports = () =>
      sql`select r.id, r.audit_event_id, e.created_at from audit_reports r join audit_events e on e.id = r.audit_event_id order by r.id`.execute(
        db,
      );
    const [eventsBefore, reportsBefore] = [(await events()).rows, (await reports()).rows];
    expect(reportsBefore).toHaveLength(8);

    expect(await migrating.migrateIt()).toEqual([PARTITIONING]);

    expect((await events()).rows).toEqual(eventsBefore);
    expect((await reports()).rows).toEqual(reportsBefore);
    const keyed = await sql<{
      n: number;
    }>`select count(*)::int as n from audit_reports r join audit_events e on (e.id, e.created_at) = (r.audit_event_id, r.audit_event_created_at)`.execute(
      db,
    );
    expect(keyed.rows[0]!.n).toBe(8);
    // A month per month of events, none before them.
    const months = (
      await sql<{ partition: string }>`select partition::text from month_partitions('audit_events')`.execute(db)
    ).rows.map((row) => row.partition);
    expect(months.slice(0, 2)).toEqual(['audit_events_y2024m01', 'audit_events_y2024m02']);
    expect(months).toContain('audit_events_y2025m12');
    const counts = (
      await sql<{
        partition: string;
        n: number;
      }>`select tableoid::regclass::text as partition, count(*)::int as n from audit_events group by 1`.execute(db)
    ).rows;
    expect(counts.find((row) => row.partition === 'audit_events_y2024m02')).toEqual({
      partition: 'audit_events_y2024m02',
      n: 29,
    });
    expect(
      counts.some((row) => row.partition === 'audit_events_before' || row.partition === 'audit_events_after'),
    ).toBe(false);
    // An event goes with its report, through the new foreign key.
    const reported = reportsBefore[0] as { audit_event_id: string };
    await sql`delete from audit_events where id = ${reported.audit_event_id}`.execute(db);
    expect((await reports()).rows).toHaveLength(7);
    // A report must name an event that exists, by its whole key.
    await expect(
      sql`insert into audit_reports (audit_event_id, audit_event_created_at, user_id, reason) values (${reported.audit_event_id}, now(), ${user.id}, 'other')`.execute(
        db,
      ),
    ).rejects.toThrow(/foreign key/);
  }, 60_000);
});
