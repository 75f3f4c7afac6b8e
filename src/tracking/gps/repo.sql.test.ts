import { expect, it } from 'vitest';
import { snapshotClock, sqlRecorder } from '../../../test/sql-snapshot.js';
import { createTripsService } from '../trips/service.js';
import { createGpsRepo, type NewGpsPoint } from './repo.js';
import { createTrackReader } from './track.js';

/**
 * The SQL of GPS points, committed beside this file as repo.sql: a change of a query shows in review as a
 * change of SQL. `npx vitest run src/tracking/gps/repo.sql.test.ts -u` writes it again (docs/development.md).
 */
const DEVICE = '11111111-1111-4111-8111-111111111111';
const OTHER_DEVICE = '22222222-2222-4222-8222-222222222222';
const TRIP = '33333333-3333-4333-8333-333333333333';
const USER = '44444444-4444-4444-8444-444444444444';
const POINT = 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa';
const IMPORT = '66666666-6666-4666-8666-666666666666';
const AT = new Date('2026-03-14T11:00:00.000Z');
const AFTER = { after: { at: AT, id: POINT } };

const point = (
  id: string,
  deviceId: string | null,
  seconds: number,
  fields: Partial<NewGpsPoint> = {},
): NewGpsPoint & { id: string } => ({
  id,
  device_id: deviceId,
  trip_id: null,
  latitude: 52.52,
  longitude: 13.405,
  altitude: null,
  heading: null,
  timestamp: new Date(AT.getTime() + seconds * 1000),
  speed_kmh: 0,
  speed_mps: 0,
  speed_mph: 0,
  speed_knots: 0,
  pdop: null,
  hdop: null,
  vdop: null,
  accuracy: null,
  battery_level: null,
  charging: null,
  motion: null,
  alarm: null,
  sent_by: USER,
  import_id: null,
  ...fields,
});

it('matches the SQL committed in repo.sql', async () => {
  const sql = sqlRecorder();
  const repo = createGpsRepo(sql.db);
  const tracks = createTrackReader(sql.db);
  // The trips module's query for the trip a device's new points join, as src/services.ts registers it.
  const loggingTrip = createTripsService({ db: sql.db, clock: snapshotClock } as Parameters<
    typeof createTripsService
  >[0]).loggingTripOf;
  const inserted = (stored: number, trips: { device_id: string; trip_id: string | null }[]) => [
    [{ stored, ids: null, created_at: AT, trips }],
  ];

  const full = point(POINT, DEVICE, 0, {
    altitude: 34.5,
    heading: 90,
    speed_kmh: 36,
    speed_mps: 10,
    speed_mph: 22.37,
    speed_knots: 19.44,
    pdop: 1.2,
    hdop: 0.9,
    vdop: 0.8,
    accuracy: 5,
    battery_level: 0.75,
    charging: true,
    motion: 'driving',
    alarm: 'sos "now"',
  });
  await sql.record(
    'insert of a point with every field (prepared, built once per set of columns)',
    () => repo.insertMany([full], loggingTrip),
    inserted(1, [{ device_id: DEVICE, trip_id: TRIP }]),
  );
  await sql.record(
    'insert of a batch: the columns every point sends, two devices and a point of none',
    () =>
      repo.insertMany(
        [
          point('bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb', OTHER_DEVICE, 1),
          point('cccccccc-cccc-4ccc-8ccc-cccccccccccc', DEVICE, 2),
          point('dddddddd-dddd-4ddd-8ddd-dddddddddddd', null, 3),
        ],
        loggingTrip,
        { readBack: false },
      ),
    inserted(3, [
      { device_id: DEVICE, trip_id: TRIP },
      { device_id: OTHER_DEVICE, trip_id: null },
    ]),
  );
  await sql.record(
    'insert of a point sent again, then the point stored before read back',
    () => repo.insertMany([point(POINT, DEVICE, 0)], loggingTrip),
    inserted(0, [{ device_id: DEVICE, trip_id: TRIP }]),
  );

  await sql.record(
    "insert of a file import's points: each names the import",
    () =>
      repo.insertMany([point('eeeeeeee-eeee-4eee-8eee-eeeeeeeeeeee', DEVICE, 4, { import_id: IMPORT })], loggingTrip, {
        readBack: false,
      }),
    inserted(1, [{ device_id: DEVICE, trip_id: null }]),
  );
  const imported = { deviceId: DEVICE, importId: IMPORT, from: AT, to: new Date('2026-03-14T12:00:00.000Z') };
  await sql.record("removal of a file import's points, but those of a trip", () => repo.deleteImported(imported), [[]]);
  await sql.record("a file import's points still stored", () => repo.countImported(imported), [[{ n: '0' }]]);

  await sql.record('latest point', () => repo.latest());
  await sql.record('latest point of a device', () => repo.latest(DEVICE));
  await sql.record('latest point of each device', () => repo.latestPerDevice([DEVICE, OTHER_DEVICE]));

  await sql.record('page of points, newest first, numbered, with the total', () => repo.page(50, { offset: 100 }));
  await sql.record('page of points, newest first, after a cursor, with the total', () => repo.page(50, AFTER));
  await sql.record("page of a trip's points, numbered", () => repo.pointsOfTrip(TRIP, 50, { offset: 100 }));
  await sql.record("page of a trip's points after a cursor", () => repo.pointsOfTrip(TRIP, 50, AFTER));
  await sql.record('first points of trips', () =>
    repo.firstPointsOfTrips([TRIP, '55555555-5555-4555-8555-555555555555'], 20),
  );
  await sql.record("a device's points in a time range after a cursor (file export)", () =>
    repo.pointsOfDeviceAfter(DEVICE, { from: AT, to: new Date('2026-03-15T00:00:00.000Z') }, AFTER.after, 1000),
  );
  await sql.record("a user's points after a cursor (personal data export)", () =>
    repo.pointsSentByAfter(USER, AFTER.after, 1000),
  );
  await sql.record("a device's points others sent, after a cursor (personal data export of its owner)", () =>
    repo.pointsOfDeviceNotSentByAfter(DEVICE, USER, AFTER.after, 1000),
  );

  const range = { from: AT, to: new Date('2026-03-15T00:00:00.000Z') };
  const extent = [[{ total: '0', south: null, west: null, north: null, east: null }]];
  const columns = [[{ kept: '0', json: null }]];
  await sql.record('track: extent of a time range', () => tracks.extent(DEVICE, range), extent);
  await sql.record('track: extent of every point of a device', () => tracks.extent(DEVICE, {}), extent);
  await sql.record('track: points thinned for zoom 12', () => tracks.columnsJson(DEVICE, range, 12), columns);
  await sql.record('track: every point', () => tracks.columnsJson(DEVICE, range, null), columns);

  await expect(sql.text()).toMatchFileSnapshot('./repo.sql');
});
