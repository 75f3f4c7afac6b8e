import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '../../../test/client.js';
import {
  adminIdOf,
  buildTestApp,
  createUser,
  forbidden,
  login,
  onEveryNode,
  TEST_ADMIN,
  testConfig,
  UNKNOWN_ID,
  type TestApp,
} from '../../../test/helpers.js';

const SPEEDS = { speed_kmh: 1, speed_mps: 0.28, speed_mph: 0.62, speed_knots: 0.54 };
/** Three points of 1 May 2026, 08:00 to 08:02. */
const CSV =
  'time,latitude,longitude\n' +
  '2026-05-01T08:00:00Z,54.1,10.1\n' +
  '2026-05-01T08:01:00Z,54.2,10.2\n' +
  '2026-05-01T08:02:00Z,54.3,10.3\n';
const FIRST = '2026-05-01T08:00:00.000Z';
const LAST = '2026-05-01T08:02:00.000Z';
const IMPORT_NOT_FOUND = { error: 'NotFound', message: 'Import not found', code: 'gps_file.import_not_found' };

/** GET /v1/gps/imports and DELETE /v1/gps/imports/{id}/points (issue 49). */
describe('listing imports and removing their points', () => {
  let t: TestApp;
  let admin: Client;
  let adminId: string;
  beforeAll(async () => {
    t = await buildTestApp({ config: { rateLimit: { ...testConfig().rateLimit, gpsWrite: 10_000, user: 10_000 } } });
    admin = t.as(await login(t.app, 'admin', TEST_ADMIN.password));
    adminId = await adminIdOf(t);
  });
  afterAll(() => t.close());

  const person = async () => {
    const user = await createUser(t.app);
    return { id: user.id, username: user.username, api: t.as(user.token) };
  };
  const deviceOf = async (api: Client, name = 'Boat') =>
    (await api.post('/v1/devices', { name }).expect(201)).body.data.id;
  /** Imports the CSV into the device and waits for it to end; its record. */
  const imported = async (api: Client, deviceId: string, csv = CSV) => {
    const started = await api
      .post('/v1/gps/import', csv, { query: { device_id: deviceId }, headers: { 'content-type': 'text/csv' } })
      .expect(202);
    await onEveryNode(t, (services) => services.gpsFiles.idle());
    return (await api.get(`/v1/gps/imports/${started.body.data.id}`).expect(200)).body.data;
  };
  const send = (api: Client, deviceId: string, at: string, latitude: number) =>
    api
      .post('/v1/gps', {
        device_id: deviceId,
        latitude,
        longitude: 10,
        ...SPEEDS,
        timestamp: Date.parse(at) / 1000,
      })
      .expect(201);
  /** The latitudes of the device's points, oldest first. */
  const latitudesOf = async (api: Client, deviceId: string) =>
    (await api.get('/v1/gps/export', { query: { device_id: deviceId, format: 'csv' } }).expect(200)).text
      .trim()
      .split('\n')
      .slice(1)
      .map((line) => Number(line.split(',')[1]));
  const revert = (api: Client, id: string) => api.delete(`/v1/gps/imports/${id}/points`);

  it('removes exactly the points the import stored: not a point the device had, nor one sent meanwhile', async () => {
    const owner = await person();
    const device = await deviceOf(owner.api);
    // The device had the second point of the file already: the import skips it as a duplicate.
    await owner.api
      .post('/v1/gps', {
        device_id: device,
        latitude: 54.2,
        longitude: 10.2,
        ...SPEEDS,
        timestamp: Date.parse('2026-05-01T08:01:00Z') / 1000,
      })
      .expect(201);
    const record = await imported(owner.api, device);
    expect(record).toMatchObject({
      status: 'done',
      imported: 2,
      duplicates: 1,
      created_by: owner.id,
      first_point_at: FIRST,
      last_point_at: LAST,
      reverted_at: null,
      removed: 0,
    });
    // A point sent meanwhile, within the file's hours.
    await send(owner.api, device, '2026-05-01T08:01:30Z', 54.25);
    expect(await latitudesOf(owner.api, device)).toEqual([54.1, 54.2, 54.25, 54.3]);
    expect(
      (await owner.api.get('/v1/gps/current', { query: { device_id: device } }).expect(200)).body.data,
    ).toMatchObject({ latitude: 54.3 });

    const reverted = await revert(owner.api, record.id).expect(200);
    expect(reverted.body).toEqual({
      data: {
        removed: 2,
        kept_in_trips: 0,
        import: { ...record, reverted_at: expect.any(String), removed: 2 },
      },
      _links: { self: expect.stringMatching(new RegExp(`/v1/gps/imports/${record.id}/points$`)) },
    });
    expect(await latitudesOf(owner.api, device)).toEqual([54.2, 54.25]);
    // The latest point was one of them: the cache forgot it.
    expect(
      (await owner.api.get('/v1/gps/current', { query: { device_id: device } }).expect(200)).body.data,
    ).toMatchObject({ latitude: 54.25 });
    expect((await owner.api.get(`/v1/gps/imports/${record.id}`).expect(200)).body.data).toEqual(
      reverted.body.data.import,
    );
    // Again: nothing is left of it.
    const again = await revert(owner.api, record.id).expect(200);
    expect(again.body.data).toMatchObject({ removed: 0, kept_in_trips: 0, import: { removed: 2 } });
  });

  it('keeps the points that joined a trip, as DELETE /v1/gps/{id} does, and takes them once the trip lets go', async () => {
    const owner = await person();
    const device = await deviceOf(owner.api);
    const trip = (
      await owner.api.post('/v1/trips', { name: 'Logging', device_id: device, gps_logging_enabled: true }).expect(201)
    ).body.data;
    await owner.api.patch(`/v1/trips/${trip.id}`, { status: 'active' }).expect(200);
    const record = await imported(owner.api, device);
    expect(record.imported).toBe(3);
    const kept = await revert(owner.api, record.id).expect(200);
    expect(kept.body.data).toMatchObject({ removed: 0, kept_in_trips: 3, import: { removed: 0 } });
    expect(kept.body.data.import.reverted_at).toEqual(expect.any(String));
    expect(await latitudesOf(owner.api, device)).toEqual([54.1, 54.2, 54.3]);

    await owner.api.patch(`/v1/trips/${trip.id}`, { status: 'completed' }).expect(200);
    await owner.api.delete(`/v1/trips/${trip.id}`).expect(204); // its points stay, without trip
    const freed = await revert(owner.api, record.id).expect(200);
    expect(freed.body.data).toMatchObject({ removed: 3, kept_in_trips: 0, import: { removed: 3 } });
    expect(await latitudesOf(owner.api, device)).toEqual([]);
  });

  it('lets only the starter, while they own the device, or a holder of gps:delete remove them', async () => {
    const owner = await person();
    const friend = await person();
    const stranger = await person();
    const device = await deviceOf(owner.api);
    await owner.api.post(`/v1/devices/${device}/shares`, { user_id: friend.id, level: 'full' }).expect(201);
    const mine = await imported(owner.api, device);
    for (const other of [friend, stranger])
      expect((await revert(other.api, mine.id).expect(404)).body).toEqual(IMPORT_NOT_FOUND);
    expect((await revert(owner.api, UNKNOWN_ID).expect(404)).body).toEqual(IMPORT_NOT_FOUND);

    // Handed to the friend, the device is no longer the starter's to change.
    await owner.api.post(`/v1/devices/${device}/transfer`, { user_id: friend.id }).expect(200);
    expect((await revert(owner.api, mine.id).expect(403)).body).toEqual({
      error: 'Forbidden',
      message: 'Points may be sent only to a device you own',
      code: 'gps.device_not_writable',
    });
    expect((await revert(friend.api, mine.id).expect(404)).body).toEqual(IMPORT_NOT_FOUND);
    expect((await revert(admin, mine.id).expect(200)).body.data).toMatchObject({ removed: 3 });
    expect(await latitudesOf(friend.api, device)).toEqual([]);
  });

  it('refuses an import that still runs, and one made before imports recorded their points (409)', async () => {
    const owner = await person();
    const device = await deviceOf(owner.api);
    const row = { device_id: device, created_by: owner.id, format: 'csv', bytes_total: CSV.length };
    const [running, old] = await t.database.db
      .insertInto('gps_imports')
      .values([
        { ...row, updated_at: t.clock.now() },
        { ...row, status: 'done', imported: 3, finished_at: t.clock.now() },
      ])
      .returning('id')
      .execute();
    expect((await revert(owner.api, running!.id).expect(409)).body).toEqual({
      error: 'Conflict',
      message: 'The import is still running; remove its points once it has ended',
      code: 'gps_file.import_running',
    });
    expect((await revert(owner.api, old!.id).expect(409)).body).toEqual({
      error: 'Conflict',
      message:
        'The import was made before imports recorded their points, so its points cannot be told from the device’s others',
      code: 'gps_file.import_not_revertible',
    });
  });

  it('lists my imports newest first (of one device with device_id), everyone’s with all=true for gps:write', async () => {
    const owner = await person();
    const [boat, car] = [await deviceOf(owner.api, 'Boat'), await deviceOf(owner.api, 'Car')];
    const first = await imported(owner.api, boat);
    t.clock.advance(1000);
    const second = await imported(owner.api, car);
    t.clock.advance(1000);
    const byAdmin = await imported(admin, boat, CSV.replaceAll('54.', '55.'));

    const listed = await owner.api.get('/v1/gps/imports').expect(200);
    expect(listed.body.data).toEqual([second, first]);
    expect(listed.body.pagination).toMatchObject({ page: 1, limit: 20, total: 2 });
    const ofBoat = await owner.api.get('/v1/gps/imports', { query: { device_id: boat } }).expect(200);
    expect(ofBoat.body.data).toEqual([first]);
    const paged = await owner.api.get('/v1/gps/imports', { query: { limit: 1, page: 2 } }).expect(200);
    expect(paged.body.data).toEqual([first]);

    expect((await owner.api.get('/v1/gps/imports', { query: { all: true } }).expect(403)).body).toEqual(
      forbidden('gps:write'),
    );
    expect((await admin.get('/v1/gps/imports').expect(200)).body.data.map((row) => row.id)).not.toContain(first.id);
    const everyone = await admin.get('/v1/gps/imports', { query: { all: true, device_id: boat } }).expect(200);
    expect(everyone.body.data).toEqual([byAdmin, first]);
    expect(byAdmin.created_by).toBe(adminId);
    expect((await (await person()).api.get('/v1/gps/imports').expect(200)).body.data).toEqual([]);
  });
});
