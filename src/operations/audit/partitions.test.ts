import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createUser, login, TEST_ADMIN, type TestApp } from '../../../test/helpers.js';

const DAY = 86_400_000;

/** The activity log by month (migration 0038): months added ahead by audit-partitions, dropped by audit-retention. */
describe('activity-log events by month, with retention', () => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    t = await buildTestApp();
    admin = await login(t.app, 'admin', TEST_ADMIN.password);
  });
  afterAll(() => t.close());

  const runJob = async (name: string) => {
    const response = await t.as(admin).post(`/v1/system/jobs/${name}/run`).expect(200);
    const { data } = response.body;
    return data as typeof data & { last_result: Record<string, unknown> };
  };
  const months = async () =>
    (
      await sql<{
        partition: string;
        month: Date;
      }>`select partition::text, month from month_partitions('audit_events')`.execute(t.database.db)
    ).rows;
  const partitionOf = async (id: string) =>
    (
      await sql<{
        partition: string;
      }>`select tableoid::regclass::text as partition from audit_events where id = ${id}`.execute(t.database.db)
    ).rows[0]?.partition;

  it('adds months ahead, moves reported events out of the catch-all, and drops whole months past retention with their reports', async () => {
    // Events are stamped by the database's clock; these are written at chosen times (an upgraded log's past).
    const first = (await months())[0]!.month.getTime();
    const user = await createUser(t.app);
    const eventAt = async (day: number) =>
      (
        await sql<{
          id: string;
        }>`insert into audit_events (user_id, event_type, created_at) values (${user.id}, 'user_updated', ${new Date(first + day * DAY)}) returning id`.execute(
          t.database.db,
        )
      ).rows[0]!.id;
    // Days after the first month's start: in months 1 and 3, and in month 4, which has no partition yet.
    const [day40, day100, day130] = [await eventAt(40), await eventAt(100), await eventAt(130)];
    expect(await partitionOf(day130)).toBe('audit_events_after');
    const report = async (id: string) => {
      const response = await t.as(user.token).post(`/v1/users/me/audit/${id}/report`, { reason: 'not_me' }).expect(201);
    };
    await report(day40);
    await report(day130);

    // 500 days on: the months up to three ahead are made; the reported event of month 4 moves into its month
    // and keeps its report.
    t.clock.freeze(new Date(first + 515 * DAY));
    admin = await login(t.app, 'admin', TEST_ADMIN.password);
    const token = await login(t.app, user.username, user.password);
    const added = await runJob('audit-partitions');
    expect(added).toMatchObject({ last_outcome: 'succeeded', last_error: null });
    expect(added.last_result.partitions_added).toBeGreaterThanOrEqual(16);
    expect(await runJob('audit-partitions')).toMatchObject({ last_result: { partitions_added: 0 } });
    expect(await partitionOf(day130)).toMatch(/^audit_events_y\d{4}m\d{2}$/);
    const reported = async () =>
      (await t.as(token).get('/v1/users/me/audit/reports').expect(200)).body
        .map((r: { audit_event_id: string }) => r.audit_event_id)
        .sort();
    expect(await reported()).toEqual([day40, day130].sort());

    // Nothing goes while retention is unset (the default).
    expect(await runJob('audit-retention')).toMatchObject({
      last_result: { retention_days: null, partitions_dropped: 0, events_deleted: 0 },
    });

    // 400 days kept: the cutoff is day 115. Months 0 to 2 go whole (with every event written so far by the
    // database's clock, and the catch-all before them), with the report on day 40; month 3 loses day 100.
    const monthsBefore = (await months()).length;
    expect((await t.as(admin).patch('/v1/system-config/audit.retention_days', { value: 400 })).status).toBe(200);
    const expired = await runJob('audit-retention');
    expect(expired.last_result).toEqual({
      retention_days: 400,
      cutoff: new Date(first + 115 * DAY).toISOString(),
      partitions_dropped: expect.any(Number),
      events_deleted: 1,
    });
    expect(expired.last_result.partitions_dropped).toBeGreaterThanOrEqual(3);
    expect((await months()).length).toBe(monthsBefore - (expired.last_result.partitions_dropped as number));
    expect(await partitionOf(day40)).toBeUndefined();
    expect(await partitionOf(day100)).toBeUndefined();
    const mine = (await t.as(token).get('/v1/users/me/audit').expect(200)).body;
    expect(mine.events.map((event: { id: string; is_reported: boolean }) => [event.id, event.is_reported])).toEqual([
      [day130, true],
    ]);
    expect(await reported()).toEqual([day130]);
    // An event before the months left still has a place (audit_events_before), and the next run removes it.
    const late = await eventAt(10);
    expect(await partitionOf(late)).toBe('audit_events_before');
    expect((await runJob('audit-retention')).last_result).toMatchObject({ partitions_dropped: 0, events_deleted: 1 });
  });
});
