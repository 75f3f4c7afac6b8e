import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../app.js';
import type { Database } from '../../platform/db/database.js';
import { HOLD_MS } from '../../platform/kv/cache.js';
import type { KeyValueStore } from '../../platform/kv/index.js';
import { client, type Client } from '../../../test/client.js';
import { createTestClock, type TestClock } from '../../../test/clock.js';
import {
  createUser,
  openTestDatabase,
  openTestKeyValueStore,
  recordingStatements,
  testConfig,
} from '../../../test/helpers.js';
import { openSocket, type TestSocket } from '../../../test/ws-client.js';

const SPEEDS = { speed_kmh: 1, speed_mps: 0.28, speed_mph: 0.62, speed_knots: 0.54 };
const POINTS = 10;

/** A statement as `select devices` or `insert gps_points` (the verb and the first table it names). */
const labelOf = (statement: string) => {
  const insert = /\binsert into "(\w+)"/.exec(statement);
  if (insert) return `insert ${insert[1]}`;
  const [verb = ''] = statement.trim().split(/\s/, 1);
  return `${verb.toLowerCase()} ${/\b(?:from|update|into) "(\w+)"/.exec(statement)?.[1] ?? '?'}`;
};

/**
 * Issue 43: a point fanned out to WebSocket subscribers costs no database read, whoever listens. A subscriber's
 * grants are read when it connects (and again when they change); each new point is judged against those held.
 * Builds its own app over a database that records every statement's SQL (so it runs on one node only).
 */
describe('statements while points fan out to gps subscribers', () => {
  let app: FastifyInstance;
  let database: Database;
  let kv: KeyValueStore;
  let clock: TestClock;
  let statements: string[];
  let base: string;
  const opened: TestSocket[] = [];
  beforeAll(async () => {
    [database, kv] = await Promise.all([openTestDatabase(), openTestKeyValueStore()]);
    const recorded = recordingStatements(database);
    statements = recorded.statements;
    clock = createTestClock();
    const config = testConfig({ rateLimit: { ...testConfig().rateLimit, gpsWrite: 10_000, user: 10_000 } });
    app = await buildApp(config, { database: recorded.database, kv, clock }, { logger: false, scheduledJobs: false });
    base = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    for (const socket of opened) socket.close();
    await app.close();
    await Promise.all([kv.close(), database.close()]);
  });

  const person = async () => {
    const user = await createUser(app);
    return { id: user.id, api: client(app, user.token) };
  };
  /** A socket of the user, subscribed to gps. */
  const listen = async (api: Client) => {
    const { ticket } = (await api.post('/v1/ws/ticket').expect(200)).body;
    const socket = await openSocket(base, { protocols: ['service-ticket', ticket] });
    opened.push(socket);
    await socket.next('Welcome');
    await socket.request({ type: 'Subscribe', channel: 'gps', id: 'gps' }, 'Subscribed');
    return socket;
  };
  let second = 1_700_000_000;
  /** POINTS points of the device, one request (so one group-committed batch) each: their ids. */
  const record = async (api: Client, deviceId: string) => {
    const ids: string[] = [];
    for (let i = 0; i < POINTS; i++) {
      const point = await api
        .post('/v1/gps', { device_id: deviceId, latitude: 54, longitude: 10, timestamp: second++, ...SPEEDS })
        .expect(201);
      ids.push(point.body.data.id);
    }
    return ids;
  };
  const heard = async (socket: TestSocket, count: number) => {
    const ids: unknown[] = [];
    for (let i = 0; i < count; i++) ids.push(((await socket.next('GpsPoint')).data as { id?: string }).id);
    return ids;
  };

  it('runs only the writes of the points, as with nobody listening: no read per point or per subscriber', async () => {
    const owner = await person();
    const grantee = await person();
    const stranger = await person();
    const device = (await owner.api.post('/v1/devices', { name: 'Dinghy' }).expect(201)).body.data;
    await owner.api.post(`/v1/devices/${device.id}/shares`, { user_id: grantee.id, level: 'live' }).expect(201);
    // A share forgets its users' grants and holds them out of the cache for a while; past that, they are cached.
    clock.advance(HOLD_MS);
    await record(owner.api, device.id);

    statements.length = 0;
    await record(owner.api, device.id);
    const alone = statements.map(labelOf);
    // Each batch reads the device it names (it must exist) and inserts: what writing a point costs.
    expect(alone).toEqual(Array.from({ length: POINTS }, () => ['select devices', 'insert gps_points']).flat());

    const [ownerSocket, granteeSocket, strangerSocket] = [
      await listen(owner.api),
      await listen(grantee.api),
      await listen(stranger.api),
    ];
    statements.length = 0;
    const ids = await record(owner.api, device.id);
    expect(await heard(ownerSocket!, POINTS)).toEqual(ids);
    expect(await heard(granteeSocket!, POINTS)).toEqual(ids);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(strangerSocket!.pending().filter((message) => message.type === 'GpsPoint')).toEqual([]);
    expect(statements.map(labelOf)).toEqual(alone);
  });
});
