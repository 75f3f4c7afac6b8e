import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Client } from '../../../test/client.js';
import { buildTestApp, login, TEST_ADMIN, type TestApp } from '../../../test/helpers.js';

const POINT = { latitude: 54.32, longitude: 10.14, speed_kmh: 36, speed_mps: 10, speed_mph: 22.37, speed_knots: 19.44 };
const DAY = 86_400_000;

/** Monthly partitions of GPS points (migration 0035), added ahead and expired by the scheduled jobs. */
describe('GPS points by month, with retention', () => {
  let t: TestApp;
  let admin: string;
  let api: Client;
  beforeAll(async () => {
    t = await buildTestApp();
    admin = await login(t.app, 'admin', TEST_ADMIN.password);
    api = t.as(admin);
  });
  afterAll(() => t.close());

  const runJob = async (name: string) => {
    const response = await api.post(`/v1/system/jobs/${name}/run`).expect(200);
    const { data } = response.body;
    return data as typeof data & { last_result: Record<string, unknown> };
  };
  const months = async () =>
    (
      await sql<{ partition: string; month: Date }>`select partition::text, month from gps_points_months()`.execute(
        t.database.db,
      )
    ).rows;

  it('adds months ahead, moves points from the catch-all, and drops whole months past retention, keeping trips', async () => {
    // The months the migration made start with the one it ran in; the clock stands half a month into it.
    const first = (await months())[0]!.month.getTime();
    t.clock.freeze(new Date(first + 15 * DAY));
    const device = (await api.post('/v1/devices', { name: 'retention tracker' }).expect(201)).body.data.id as string;
    const trip = (
      await api.post('/v1/trips', { name: 'Retention run', device_id: device, gps_logging_enabled: true }).expect(201)
    ).body.data.id as string;
    expect((await api.patch(`/v1/trips/${trip}`, { status: 'active' })).status).toBe(200);
    // Days after the first month's start: before it (gps_points_before), in months 0, 1 and 3, and in month 4,
    // which has no partition yet (gps_points_after holds it).
    const days = [-400, 1, 40, 100, 130];
    const points = days.map((day) => ({ ...POINT, device_id: device, timestamp: (first + day * DAY) / 1000 }));
    expect((await api.post('/v1/gps/batch', points)).body).toEqual({ stored: 5, duplicates: 0, refused: [] });
    // The trip's own count of its points (kept by a trigger, and by retention when it drops a month).
    const tripCount = async () => {
      const response = await api.get(`/v1/trips/${trip}/gps`);
      if (response.status !== 200) throw new Error(response.text);
      return response.body.pagination.total as number;
    };
    expect(await tripCount()).toBe(5);

    // 500 days on: the months up to three ahead are added, and months back to the oldest point; the points of
    // month 4 (in gps_points_after) and of day -400 (in gps_points_before) move into their months.
    t.clock.advance(500 * DAY);
    admin = await login(t.app, 'admin', TEST_ADMIN.password);
    api = t.as(admin);
    const added = await runJob('gps-partitions');
    expect(added).toMatchObject({ last_outcome: 'succeeded', last_error: null });
    expect(added.last_result.partitions_added).toBeGreaterThanOrEqual(16);
    expect(added.last_result.partitions_added_before).toBeGreaterThanOrEqual(13);
    expect(await runJob('gps-partitions')).toMatchObject({
      last_result: { partitions_added: 0, partitions_added_before: 0 },
    });
    const partitionOf = async (day: number) =>
      (
        await sql<{
          partition: string;
        }>`select tableoid::regclass::text as partition from gps_points where device_id = ${device} and "timestamp" = ${new Date(first + day * DAY)}`.execute(
          t.database.db,
        )
      ).rows[0]?.partition;
    const monthly = /^gps_points_y\d{4}m\d{2}$/;
    expect(await partitionOf(130)).toMatch(monthly);
    expect(await partitionOf(-400)).toMatch(monthly);
    expect(await tripCount()).toBe(5);

    // Nothing goes while retention is unset (the default).
    expect(await runJob('gps-retention')).toMatchObject({
      last_result: { retention_days: null, partitions_dropped: 0, points_deleted: 0 },
    });

    // 400 days kept: the cutoff is day 115 of the first month's count. The months up to month 2 go whole (and
    // the catch-all before them); month 3 loses the rows before the cutoff; month 4 stays.
    const monthsBefore = (await months()).length;
    expect((await api.patch('/v1/system-config/gps.retention_days', { value: 400 })).status).toBe(200);
    const expired = await runJob('gps-retention');
    expect(expired.last_result).toEqual({
      retention_days: 400,
      cutoff: new Date(first + 115 * DAY).toISOString(),
      partitions_dropped: expect.any(Number),
      points_deleted: 1,
    });
    const left = (await api.get(`/v1/trips/${trip}/gps`).expect(200)).body.data as { timestamp: string }[];
    expect(left.map((point) => point.timestamp)).toEqual([new Date(first + 130 * DAY).toISOString()]);
    // The trip stays, its count follows the points.
    expect(await tripCount()).toBe(1);
    const remaining = await months();
    expect(remaining.length).toBe(monthsBefore - (expired.last_result.partitions_dropped as number));
    // Month 3 (holding the cutoff) is the first left.
    expect(remaining[0]!.month.getTime()).toBeGreaterThan(first + 85 * DAY);
    expect(remaining[0]!.month.getTime()).toBeLessThan(first + 115 * DAY);
    // No gap before the months left: an old point (an import) is still stored, in gps_points_before, and the
    // next run gives it its month.
    expect(
      (await api.post('/v1/gps/batch', [{ ...POINT, device_id: device, timestamp: (first + 10 * DAY) / 1000 }])).body,
    ).toMatchObject({ stored: 1 });
    expect(await partitionOf(10)).toBe('gps_points_before');
    expect(await runJob('gps-partitions')).toMatchObject({
      last_result: { partitions_added: 0, partitions_added_before: 3 },
    });
    expect(await partitionOf(10)).toMatch(monthly);
    expect(await tripCount()).toBe(2);
  });

  it('refuses a retention that is not a whole number of days, naming the field', async () => {
    const response = await api.patch('/v1/system-config/gps.retention_days', { value: 0 }).expect(400);
    expect(response.body).toMatchObject({ code: 'system_config.invalid_value' });
    expect(response.body.message).toContain('value');
    expect((await api.patch('/v1/system-config/audit.retention_days', { value: 'forever' })).status).toBe(400);
  });
});
