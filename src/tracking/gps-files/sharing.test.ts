import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '../../../test/client.js';
import {
  buildTestApp,
  createUser,
  login,
  onEveryNode,
  TEST_ADMIN,
  testConfig,
  type TestApp,
} from '../../../test/helpers.js';

const DAY = 86_400_000;
const SPEEDS = { speed_kmh: 1, speed_mps: 0.28, speed_mph: 0.62, speed_knots: 0.54 };

/**
 * GPS files (track, export, import) follow the visibility rule of issue 43 (docs/sharing.md): a self-service
 * user reaches their own devices, a grantee a shared one at its level, a stranger nothing; a holder of the
 * global permissions every device, as the interface spec says.
 */
describe('GPS files in the caller’s scope', () => {
  let t: TestApp;
  let admin: Client;
  /** The owner (role User only), a grantee at each level (history and full: 7 days), a stranger. */
  let owner: { id: string; api: Client };
  let live: Client;
  let history: Client;
  let full: Client;
  let stranger: Client;
  let device: string;
  /** The device's points, 8 days, 1 day and 0 days old (latitudes 54.1, 54.2, 54.3), as times in ms. */
  let times: { old: number; recent: number; now: number };

  const person = async () => {
    const user = await createUser(t.app);
    return { id: user.id, api: t.as(user.token) };
  };
  const pointAt = async (deviceId: string, daysAgo: number, latitude: number) => {
    const timestamp = Math.floor((t.clock.nowMs() - daysAgo * DAY) / 1000);
    await owner.api
      .post('/v1/gps', { device_id: deviceId, latitude, longitude: 10.1, ...SPEEDS, timestamp })
      .expect(201);
    return timestamp * 1000;
  };

  beforeAll(async () => {
    t = await buildTestApp({ config: { rateLimit: { ...testConfig().rateLimit, gpsWrite: 10_000, user: 10_000 } } });
    admin = t.as(await login(t.app, 'admin', TEST_ADMIN.password));
    owner = await person();
    device = (await owner.api.post('/v1/devices', { name: 'Boat' }).expect(201)).body.data.id;
    times = {
      old: await pointAt(device, 8, 54.1),
      recent: await pointAt(device, 1, 54.2),
      now: await pointAt(device, 0, 54.3),
    };
    const grantee = async (share: { level: 'live' | 'history' | 'full'; history_days?: number }) => {
      const user = await person();
      await owner.api.post(`/v1/devices/${device}/shares`, { user_id: user.id, ...share }).expect(201);
      return user.api;
    };
    live = await grantee({ level: 'live' });
    history = await grantee({ level: 'history', history_days: 7 });
    full = await grantee({ level: 'full', history_days: 7 });
    stranger = (await person()).api;
  });
  afterAll(() => t.close());

  const NOT_FOUND = { error: 'NotFound', message: 'Device not found', code: 'device.not_found' };

  describe('GET /v1/gps/track', () => {
    const trackOf = (api: Client, from?: number) =>
      api.get('/v1/gps/track', {
        query: { device_id: device, ...(from !== undefined && { from: new Date(from).toISOString() }) },
      });
    /** The track body of the points at these latitudes (of 54.1, 54.2, 54.3). */
    const columns = (...latitudes: number[]) => {
      const at = { 54.1: times.old, 54.2: times.recent, 54.3: times.now } as Record<number, number>;
      return {
        device_id: device,
        total: latitudes.length,
        points: latitudes.length,
        zoom: null,
        bounds: latitudes.length
          ? { south: Math.min(...latitudes), west: 10.1, north: Math.max(...latitudes), east: 10.1 }
          : null,
        time: latitudes.map((latitude) => at[latitude]),
        latitude: latitudes,
        longitude: latitudes.map(() => 10.1),
        speed_kmh: latitudes.map(() => 1),
      };
    };

    it('answers the owner and a holder of gps:read every point', async () => {
      expect((await trackOf(owner.api).expect(200)).body).toEqual(columns(54.1, 54.2, 54.3));
      expect((await trackOf(admin).expect(200)).body).toEqual(columns(54.1, 54.2, 54.3));
    });

    it('answers a history or full grantee the points of their 7 days, whatever from asks', async () => {
      expect((await trackOf(history).expect(200)).body).toEqual(columns(54.2, 54.3));
      expect((await trackOf(full).expect(200)).body).toEqual(columns(54.2, 54.3));
      expect((await trackOf(history, times.old).expect(200)).body).toEqual(columns(54.2, 54.3));
      expect((await trackOf(history, times.now).expect(200)).body).toEqual(columns(54.3));
    });

    it('answers a live grantee an empty track, and a stranger 404', async () => {
      expect((await trackOf(live).expect(200)).body).toEqual(columns());
      expect((await trackOf(stranger).expect(404)).body).toEqual(NOT_FOUND);
    });
  });

  describe('GET /v1/gps/export', () => {
    const exportOf = (api: Client, from?: number) =>
      api.get('/v1/gps/export', {
        query: { device_id: device, format: 'csv', ...(from !== undefined && { from: new Date(from).toISOString() }) },
      });
    /** The times and latitudes of a CSV export's points. */
    const rowsOf = (csv: string) =>
      csv
        .split('\r\n')
        .slice(1, -1)
        .map((line) => line.split(',').slice(0, 2).join(','));
    const rows = (...latitudes: number[]) => {
      const at = { 54.1: times.old, 54.2: times.recent, 54.3: times.now } as Record<number, number>;
      return latitudes.map((latitude) => `${new Date(at[latitude]!).toISOString()},${latitude}`);
    };

    it('exports every point to the owner and a holder of gps:read', async () => {
      expect(rowsOf((await exportOf(owner.api).expect(200)).text)).toEqual(rows(54.1, 54.2, 54.3));
      expect(rowsOf((await exportOf(admin).expect(200)).text)).toEqual(rows(54.1, 54.2, 54.3));
    });

    it('exports to a full grantee the points of their 7 days, whatever from asks', async () => {
      expect(rowsOf((await exportOf(full).expect(200)).text)).toEqual(rows(54.2, 54.3));
      expect(rowsOf((await exportOf(full, times.old).expect(200)).text)).toEqual(rows(54.2, 54.3));
    });

    it('refuses a live or history grantee with 403, a stranger with 404', async () => {
      const refused = {
        error: 'Forbidden',
        message: "Only the device's owner, or someone it is shared with at level full, may export its points",
        code: 'gps_file.export_not_allowed',
      };
      expect((await exportOf(history).expect(403)).body).toEqual(refused);
      expect((await exportOf(live).expect(403)).body).toEqual(refused);
      expect((await exportOf(stranger).expect(404)).body).toEqual(NOT_FOUND);
    });
  });

  describe('POST /v1/gps/import and GET /v1/gps/imports/{id}', () => {
    const CSV = 'time,latitude,longitude\n2026-01-01T00:00:00Z,54.5,10.5\n';
    const importInto = (api: Client, deviceId?: string) =>
      api.post('/v1/gps/import', CSV, {
        query: deviceId === undefined ? {} : { device_id: deviceId },
        headers: { 'content-type': 'text/csv' },
      });
    /** Waits for the imports running to end. */
    const ended = () => onEveryNode(t, (services) => services.gpsFiles.idle());
    const reportOf = (reader: Client, id: string) => reader.get(`/v1/gps/imports/${id}`);
    const done = (id: string, deviceId: string) => ({
      data: {
        id,
        device_id: deviceId,
        format: 'csv',
        status: 'done',
        imported: 1,
        duplicates: 0,
        refused_count: 0,
        refused: [],
        notes_count: 0,
        notes: [],
        bytes_read: CSV.length,
        bytes_total: CSV.length,
        error: null,
        created_by: owner.id,
        first_point_at: '2026-01-01T00:00:00.000Z',
        last_point_at: '2026-01-01T00:00:00.000Z',
        reverted_at: null,
        removed: 0,
        created_at: expect.any(String),
        finished_at: expect.any(String),
      },
      _links: { self: expect.stringMatching(new RegExp(`/v1/gps/imports/${id}$`)) },
    });
    const IMPORT_NOT_FOUND = { error: 'NotFound', message: 'Import not found', code: 'gps_file.import_not_found' };

    it('imports into a device of the owner’s, whose report only they and a holder of gps:write read', async () => {
      const own = (await owner.api.post('/v1/devices', { name: 'Imported' }).expect(201)).body.data.id;
      const started = (await importInto(owner.api, own).expect(202)).body.data;
      expect(started).toMatchObject({ device_id: own, format: 'csv', status: 'running' });
      await ended();
      expect((await reportOf(owner.api, started.id).expect(200)).body).toEqual(done(started.id, own));
      expect((await reportOf(admin, started.id).expect(200)).body).toEqual(done(started.id, own));
      for (const other of [full, stranger])
        expect((await reportOf(other, started.id).expect(404)).body).toEqual(IMPORT_NOT_FOUND);

      // An import a holder of gps:write made into the owner's device is not the owner's to read.
      const byAdmin = (await importInto(admin, own).expect(202)).body.data;
      await ended();
      expect((await reportOf(admin, byAdmin.id).expect(200)).body).toMatchObject({ data: { status: 'done' } });
      expect((await reportOf(owner.api, byAdmin.id).expect(404)).body).toEqual(IMPORT_NOT_FOUND);
    });

    it('refuses a grantee at any level with 403, a stranger with 404, and a user naming no device with 400', async () => {
      for (const grantee of [live, history, full])
        expect((await importInto(grantee, device).expect(403)).body).toEqual({
          error: 'Forbidden',
          message: 'Points may be sent only to a device you own',
          code: 'gps.device_not_writable',
        });
      expect((await importInto(stranger, device).expect(404)).body).toEqual(NOT_FOUND);
      expect((await importInto(owner.api).expect(400)).body).toEqual({
        error: 'BadRequest',
        message: 'device_id is required: your points land on one of your devices (or link your API key to one)',
        code: 'gps.device_required',
      });
      expect((await importInto(admin).expect(400)).body).toEqual({
        error: 'BadRequest',
        message: 'device_id is required unless the calling API key is linked to a device',
        code: 'gps_file.device_required',
      });
      // Nothing reached the shared device.
      expect((await owner.api.get('/v1/gps/track', { query: { device_id: device } }).expect(200)).body.total).toBe(3);
    });
  });
});
