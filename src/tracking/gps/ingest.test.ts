import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { sql } from 'kysely';
import type { Client, RequestBody } from '../../../test/client.js';
import {
  buildTestApp,
  createApiKey,
  login,
  TEST_ADMIN,
  type TestApp,
  testConfig,
  twoNodes,
} from '../../../test/helpers.js';

// Requests queue behind a held commit within this long (first API-key uses are looked up in the database).
const WAIT = { timeout: 10_000 };
const POINT = { latitude: 54.32, longitude: 10.14, speed_kmh: 1, speed_mps: 0.28, speed_mph: 0.62, speed_knots: 0.54 };

type Point = RequestBody<'post', '/v1/gps'>;
const sendWith = (api: Client, point: Point) => api.post('/v1/gps', point);
type Sent = Awaited<ReturnType<typeof sendWith>>;
/** The point a 201 answer stored. */
function pointOf(response: Sent) {
  expect(response.status, response.text).toBe(201);
  return (response as Extract<Sent, { status: 201 }>).body.data;
}

/**
 * Makes the next lookup of named devices wait until `release()`: holds the GPS writer in the batch that makes it
 * (every batch makes one, with no ids when no point names a device; the devices of API keys come from a cache).
 */
function holdNextLookup(devices: TestApp['app']['services']['devices']) {
  const original = devices.byIds.bind(devices);
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const spy = vi.spyOn(devices, 'byIds').mockImplementationOnce(async (ids) => {
    await held;
    return original(ids);
  });
  return { spy, release };
}

/** Ingestion under faults and races: what a point may and may not join, and group commit (point-writer.ts). */
describe('GPS ingestion', () => {
  let t: TestApp;
  let admin: string;
  let api: Client;
  beforeAll(async () => {
    t = await buildTestApp({ config: { rateLimit: { ...testConfig().rateLimit, gpsWrite: 10_000 } } });
    admin = await login(t.app, 'admin', TEST_ADMIN.password);
    api = t.as(admin);
  });
  afterAll(() => t.close());

  const send = (token: string, point: Point) => sendWith(t.as(token), point);
  const newDevice = async (body: Partial<RequestBody<'post', '/v1/devices'>> = {}) =>
    (await api.post('/v1/devices', { name: 'tracker', ...body }).expect(201)).body.data.id;
  const storedIds = async (deviceId: string) =>
    (await t.database.db.selectFrom('gps_points').select('id').where('device_id', '=', deviceId).execute())
      .map((row) => row.id)
      .sort();
  const idsOf = (responses: Sent[]) => responses.map((r) => pointOf(r).id).sort();

  /**
   * Sends these requests while the writer is held by a commit of its own point, so all of them queue and
   * are committed as one batch; resolves to their responses. Counts the batches' device lookups.
   * `refused`: how many of them the route refuses before the service (bad input).
   */
  async function asOneBatch(sends: (() => Promise<Sent>)[], refused = 0) {
    const { spy: lookups, release } = holdNextLookup(t.app.services.devices);
    const recorded = vi.spyOn(t.app.services.gps, 'record');
    try {
      const holder = send(admin, { ...POINT, timestamp: 1_700_000_000 });
      await vi.waitFor(() => expect(lookups).toHaveBeenCalledTimes(1), WAIT);
      const pending = sends.map((sent) => sent());
      await vi.waitFor(() => expect(recorded).toHaveBeenCalledTimes(sends.length - refused + 1), WAIT);
      release();
      expect((await holder).status).toBe(201);
      return { responses: await Promise.all(pending), batches: lookups.mock.calls.length - 1 };
    } finally {
      release();
      lookups.mockRestore();
      recorded.mockRestore();
    }
  }

  /** Makes the database refuse the point at this latitude with this SQLSTATE while `body` runs. */
  async function refusingLatitude<T>(latitude: number, sqlstate: string, body: () => Promise<T>): Promise<T> {
    const db = t.database.db;
    await sql
      .raw(
        `create function refuse_point() returns trigger language plpgsql as $$ begin
           if new.latitude = ${latitude} then raise exception 'refused' using errcode = '${sqlstate}'; end if;
           return new; end $$;
         create trigger refuse_point before insert on gps_points for each row execute function refuse_point();`,
      )
      .execute(db);
    try {
      return await body();
    } finally {
      await sql.raw('drop trigger refuse_point on gps_points; drop function refuse_point();').execute(db);
    }
  }

  // Holds one node's group-commit writer (spies on its services): on two nodes, requests reach the other node's writer too.
  it.skipIf(twoNodes)(
    'commits concurrent points of many devices in one batch; each is stored, counted on its trip, and the latest is the newest',
    async () => {
      const keys = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          createApiKey(t.app, admin, { name: `device ${i}`, scopes: ['gps:write'] }),
        ),
      );
      const devices = await Promise.all(keys.map((key) => newDevice({ api_key_id: key.id })));
      const trip = (
        await api.post('/v1/trips', { name: 'logged', device_id: devices[0], gps_logging_enabled: true }).expect(201)
      ).body.data;
      await api.patch(`/v1/trips/${trip.id}`, { status: 'active' }).expect(200);
      // Five points per device, timestamps out of order: the newest (…+4) is sent third.
      const offsets = [2, 0, 4, 1, 3];
      const { responses, batches } = await asOneBatch(
        keys.flatMap((key) =>
          offsets.map((offset) => () => send(key.key, { ...POINT, timestamp: 1_800_000_000 + offset })),
        ),
      );
      expect(batches).toBe(1);
      expect(responses.map((r) => r.status)).toEqual(responses.map(() => 201));
      for (const [i, device] of devices.entries()) {
        const own = responses.slice(i * 5, i * 5 + 5).map(pointOf);
        expect(own.map((p) => p.device_id)).toEqual(own.map(() => device));
        expect(own.map((p) => p.trip_id)).toEqual(own.map(() => (i === 0 ? trip.id : null)));
        expect(await storedIds(device)).toEqual(own.map((p) => p.id).sort());
        const latest = (await api.get('/v1/gps/current', { query: { device_id: device } }).expect(200)).body.data;
        expect(latest).toEqual(own[2]);
      }
      const listed = (await api.get(`/v1/trips/${trip.id}/gps`, { query: { limit: 100 } }).expect(200)).body;
      expect(listed.pagination.total).toBe(5);
      expect(listed.data.map((p) => p.id).sort()).toEqual(idsOf(responses.slice(0, 5)));
      for (const response of responses.slice(0, 3))
        expect((await api.get(`/v1/gps/${pointOf(response).id}`).expect(200)).body.data).toEqual(pointOf(response));
    },
  );

  // Holds one node's group-commit writer (spies on its services): on two nodes, requests reach the other node's writer too.
  it.skipIf(twoNodes)('answers an unknown device in a batch with its own 400 and stores the others', async () => {
    const device = await newDevice();
    const unknown = '00000000-0000-4000-8000-000000000000';
    const { responses, batches } = await asOneBatch(
      [
        () => send(admin, { ...POINT, timestamp: 1_800_000_001, device_id: device }),
        () => send(admin, { ...POINT, timestamp: 1_800_000_002, device_id: unknown }),
        () => send(admin, { ...POINT, latitude: 91, timestamp: 1_800_000_003, device_id: device }),
        () => send(admin, { ...POINT, timestamp: 1_800_000_004, device_id: device }),
      ],
      1,
    );
    expect(batches).toBe(1);
    expect(responses.map((r) => r.status)).toEqual([201, 400, 400, 201]);
    expect(responses[1]!.body).toEqual({
      error: 'BadRequest',
      message: 'device_id does not name an existing device',
      code: 'gps.unknown_device',
    });
    expect(responses[2]!.body).toEqual({
      error: 'BadRequest',
      message: "Body field 'latitude' must be <= 90",
      code: 'request.validation',
    });
    expect(await storedIds(device)).toEqual(idsOf([responses[0]!, responses[3]!]));
  });

  // Holds one node's group-commit writer (spies on its services): on two nodes, requests reach the other node's writer too.
  it.skipIf(twoNodes)(
    'commits the neighbours of a point the database refuses one by one, so only that point fails',
    async () => {
      const device = await newDevice();
      const { responses, batches } = await refusingLatitude(12.5, '22023', () =>
        asOneBatch(
          [1, 2, 3, 4].map(
            (i) => () =>
              send(admin, {
                ...POINT,
                latitude: i === 2 ? 12.5 : POINT.latitude,
                timestamp: 1_800_000_000 + i,
                device_id: device,
              }),
          ),
        ),
      );
      // The batch, then each of its four points alone.
      expect(batches).toBe(5);
      expect(responses.map((r) => r.status)).toEqual([201, 400, 201, 201]);
      expect(responses[1]!.body).toEqual({
        error: 'BadRequest',
        message: 'A value has an invalid format or is out of range',
        code: 'database.invalid_value',
      });
      expect(await storedIds(device)).toEqual(idsOf([responses[0]!, responses[2]!, responses[3]!]));
    },
  );

  // Holds one node's group-commit writer (spies on its services): on two nodes, requests reach the other node's writer too.
  it.skipIf(twoNodes)(
    'answers every point of a batch 503 when the database fails in its commit, and stores none of them',
    async () => {
      const device = await newDevice();
      const { responses, batches } = await refusingLatitude(-12.5, '57P01', () =>
        asOneBatch(
          [1, 2, 3].map(
            (i) => () =>
              send(admin, {
                ...POINT,
                latitude: i === 3 ? -12.5 : POINT.latitude,
                timestamp: 1_800_000_000 + i,
                device_id: device,
              }),
          ),
        ),
      );
      expect(batches).toBe(1);
      for (const response of responses) {
        expect(response.status).toBe(503);
        expect(response.body).toEqual({
          error: 'ServiceUnavailable',
          message: 'The database is unavailable; try again shortly',
          code: 'database.unavailable',
        });
      }
      expect(await storedIds(device)).toEqual([]);
    },
  );

  // Holds one node's group-commit writer (spies on its services): on two nodes, requests reach the other node's writer too.
  it.skipIf(twoNodes)('answers 503, not 400, when the database fails while the device is looked up', async () => {
    const device = await newDevice();
    const lookup = vi
      .spyOn(t.app.services.devices, 'byIds')
      .mockRejectedValue(new Error('Connection terminated unexpectedly'));
    try {
      const response = await api.post('/v1/gps', { ...POINT, timestamp: 1_800_000_000, device_id: device });
      expect(response.status).toBe(503);
      expect(response.body).toEqual({
        error: 'ServiceUnavailable',
        message: 'The database is unavailable; try again shortly',
        code: 'database.unavailable',
      });
    } finally {
      lookup.mockRestore();
    }
  });

  it('never links a point to a trip that was completed before the point was stored', async () => {
    const device = await newDevice();
    const trip = (
      await api.post('/v1/trips', { name: 'race', device_id: device, gps_logging_enabled: true }).expect(201)
    ).body.data;
    await api.patch(`/v1/trips/${trip.id}`, { status: 'active' }).expect(200);
    const sends = Array.from({ length: 20 }, (_, i) =>
      send(admin, { ...POINT, timestamp: 1_800_000_000 + i, device_id: device }),
    );
    const completion = api.patch(`/v1/trips/${trip.id}`, { status: 'completed' }).expect(200);
    const [completed, ...points] = await Promise.all([completion, ...sends]);
    expect(points.map((p) => p.status)).toEqual(points.map(() => 201));
    const endedAt = Date.parse(completed.body.data.ended_at!);
    // A point that joined the trip was committed before the completion took the trip's lock.
    const linked = points.map(pointOf).filter((p) => p.trip_id === trip.id);
    for (const point of linked) expect(Date.parse(point.created_at)).toBeLessThanOrEqual(endedAt);
    const listed = (await api.get(`/v1/trips/${trip.id}/gps`, { query: { limit: 100 } }).expect(200)).body;
    expect(listed.pagination.total).toBe(linked.length);
  });
});

// Closes one node while its writer is held (spies on that node's services): a test of one process's shutdown.
describe.skipIf(twoNodes)('GPS group commit at shutdown', () => {
  it('commits the points queued when the app closes and refuses a point that comes later with 503', async () => {
    const t = await buildTestApp();
    const api = t.as(await login(t.app, 'admin', TEST_ADMIN.password));
    const { devices, gps } = t.app.services;
    const send = (point: Point) => sendWith(api, point);
    const device = (await api.post('/v1/devices', { name: 'late' }).expect(201)).body.data.id;
    const [record, stop] = [gps.record.bind(gps), gps.stop.bind(gps)];
    let closed!: () => void;
    const writerClosed = new Promise<void>((resolve) => (closed = resolve));
    // The writer is held in its first batch, so the points below are still queued when the app closes.
    const { spy: lookups, release } = holdNextLookup(devices);
    const recorded = vi.spyOn(gps, 'record');
    vi.spyOn(gps, 'stop').mockImplementationOnce(() => {
      const stopping = stop();
      closed();
      return stopping;
    });
    try {
      const queued = [1, 2, 3].map((i) => send({ ...POINT, timestamp: 1_800_000_000 + i, device_id: device }));
      await vi.waitFor(() => expect(lookups).toHaveBeenCalledTimes(1), WAIT);
      await vi.waitFor(() => expect(recorded).toHaveBeenCalledTimes(3), WAIT);
      // A request that reaches the writer only once it has closed (its handler ran late).
      recorded.mockImplementationOnce(async (...args) => {
        await writerClosed;
        return record(...args);
      });
      const late = send({ ...POINT, timestamp: 1_800_000_004, device_id: device });
      await vi.waitFor(() => expect(recorded).toHaveBeenCalledTimes(4), WAIT);
      const closing = t.app.close();
      await writerClosed;
      release();
      await closing;
      const answered = await Promise.all(queued);
      expect(answered.map((r) => r.status)).toEqual([201, 201, 201]);
      expect((await late).body).toEqual({
        error: 'ServiceUnavailable',
        message: 'The service is shutting down; send the point again',
        code: 'gps.stopping',
      });
      const stored = await t.database.db
        .selectFrom('gps_points')
        .select('id')
        .where('device_id', '=', device)
        .execute();
      expect(stored.map((row) => row.id).sort()).toEqual(answered.map((r) => pointOf(r).id).sort());
    } finally {
      vi.restoreAllMocks();
      release();
      await Promise.all([t.kv.close(), t.database.close()]);
    }
  });
});
