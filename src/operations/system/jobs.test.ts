import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { type Client } from '../../../test/client.js';
import {
  buildTestApp,
  createUser,
  forbidden,
  login,
  TEST_ADMIN,
  usesPostgres,
  type TestApp,
} from '../../../test/helpers.js';

const METRICS_TOKEN = 'jobs-test-metrics-token';
/** The embedded database also gets the vacuum and analysis that autovacuum does on a server. */
const JOBS = [
  'audit-partitions',
  'audit-retention',
  ...(usesPostgres ? [] : ['database-maintenance']),
  'events-retention',
  'gps-partitions',
  'gps-retention',
  'purge-expired',
];

describe('scheduled jobs over HTTP', () => {
  let t: TestApp;
  let admin: string;
  let api: Client;
  beforeAll(async () => {
    t = await buildTestApp({ config: { metricsToken: METRICS_TOKEN } });
    admin = await login(t.app, 'admin', TEST_ADMIN.password);
    api = t.as(admin);
  });
  afterAll(() => t.close());

  it('lists every job with its schedule, before any run', async () => {
    // An app of its own: the other tests run jobs, and in a shuffled order they may come first.
    const fresh = await buildTestApp();
    onTestFinished(() => fresh.close());
    const response = await fresh
      .as(await login(fresh.app, 'admin', TEST_ADMIN.password))
      .get('/v1/system/jobs')
      .expect(200);
    const { data } = response.body;
    expect(data.map((job) => job.name)).toEqual(JOBS);
    const purge = data.find((job) => job.name === 'purge-expired')!;
    expect(purge).toMatchObject({
      interval_seconds: 3600,
      running: false,
      last_outcome: null,
      last_started_at: null,
      runs: 0,
      failures: 0,
    });
    // Due at the start of the next hour.
    expect(new Date(purge.next_run_at as string).getTime() % 3600_000).toBe(0);
  });

  it('runs a job now and shows the run, in the answer, the list and the metrics', async () => {
    const run = await api.post('/v1/system/jobs/purge-expired/run').expect(200);
    const job = run.body.data;
    expect(job).toMatchObject({
      name: 'purge-expired',
      running: false,
      last_outcome: 'succeeded',
      last_error: null,
      last_result: {
        sessions: 0,
        pending_registrations: 0,
        account_tokens: 0,
        two_factor_challenges: 0,
        deleted_users: 0,
        oauth_artifacts: 0,
        oauth_signing_keys_retired: 0,
        community_member_staging: 0,
        sign_in_devices: 0,
        durable_keys: 0,
      },
    });
    expect(job.runs).toBeGreaterThanOrEqual(1);
    expect(typeof job.last_duration_ms).toBe('number');

    const metrics = await t.as(METRICS_TOKEN).raw({ url: '/metrics' });
    expect(metrics.text).toContain('waygate_job_last_success{job="purge-expired"} 1');
    expect(metrics.text).toMatch(/waygate_job_last_run_timestamp_seconds\{job="purge-expired"\} \d{10}/);
  });

  it('answers 404 naming an unknown job, and checks permissions', async () => {
    const unknown = await api.post('/v1/system/jobs/no-such-job/run').expect(404);
    expect(unknown.body).toEqual({
      error: 'NotFound',
      message: "No scheduled job is named 'no-such-job'",
      code: 'job.not_found',
    });

    const user = await createUser(t.app);
    const list = await t.as(user.token).get('/v1/system/jobs');
    expect([list.status, list.body]).toEqual([403, forbidden('settings:read')]);
    const run = await t.as(user.token).post('/v1/system/jobs/purge-expired/run');
    expect([run.status, run.body]).toEqual([403, forbidden('settings:write')]);
  });

  it.skipIf(usesPostgres)(
    'vacuums and analyses the embedded tables whose rows changed enough, as autovacuum would',
    async () => {
      type Run = { data: { last_outcome: string; last_result: { vacuumed: string[]; analyzed: string[] } } };
      const run = async () =>
        (await api.post('/v1/system/jobs/database-maintenance/run').expect(200)).body.data as Run['data'];
      await run(); // what the template and earlier tests left
      const device = (await api.post('/v1/devices', { name: 'maintained' }).expect(201)).body.data.id as string;
      const at = t.clock.nowMs();
      const points = Array.from({ length: 400 }, (_, i) => ({
        device_id: device,
        latitude: 54 + i / 1000,
        longitude: 10,
        timestamp: new Date(at - i * 1000),
        speed_kmh: 0,
        speed_mps: 0,
        speed_mph: 0,
        speed_knots: 0,
      }));
      await t.database.db.insertInto('gps_points').values(points).execute();
      const month = `gps_points_y${new Date(at).toISOString().slice(0, 4)}m${new Date(at).toISOString().slice(5, 7)}`;
      const statistics = async () =>
        (
          await sql<{ n: number }>`select count(*)::int as n from pg_stats where tablename = ${month}`.execute(
            t.database.db,
          )
        ).rows[0]!.n;

      const analysed = await run();
      expect(analysed.last_outcome).toBe('succeeded');
      expect(analysed.last_result.analyzed).toContain(month);
      expect(await statistics()).toBeGreaterThan(0);

      await t.database.db.deleteFrom('gps_points').where('device_id', '=', device).execute();
      expect((await run()).last_result).toMatchObject({ vacuumed: expect.arrayContaining([month]) });
      // Nothing changed since: nothing to do.
      expect((await run()).last_result).toEqual({ vacuumed: [], analyzed: [] });
    },
  );
});
