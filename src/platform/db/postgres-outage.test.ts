import { createServer, connect, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../app.js';
import { client } from '../../../test/client.js';
import {
  login,
  openTestDatabase,
  openTestKeyValueStore,
  TEST_ADMIN,
  testConfig,
  usesPostgres,
} from '../../../test/helpers.js';
import { createTestClock } from '../../../test/clock.js';
import type { FastifyInstance } from 'fastify';
import type { Database } from './database.js';
import type { KeyValueStore } from '../kv/index.js';

/**
 * The line to PostgreSQL as a TCP relay the test can cut: `stop` drops every connection and refuses
 * new ones (to the service, exactly what a stopped server looks like), `start` lets them through again.
 */
function relayTo(target: { host: string; port: number }) {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  const start = () =>
    new Promise<number>((resolve) => {
      server = createServer((incoming) => {
        const upstream = connect(target.port, target.host);
        for (const socket of [incoming, upstream]) {
          sockets.add(socket);
          socket.on('close', () => sockets.delete(socket));
          socket.on('error', () => socket.destroy());
        }
        incoming.pipe(upstream).pipe(incoming);
      });
      server.listen(port, '127.0.0.1', () => {
        port = (server!.address() as { port: number }).port;
        resolve(port);
      });
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server!.close(() => resolve());
    });
  return { start, stop };
}

describe.runIf(usesPostgres)('PostgreSQL stopped and started again', () => {
  const upstream = new URL(process.env.TEST_DATABASE_URL || 'postgres://127.0.0.1:5432');
  const relay = relayTo({ host: upstream.hostname, port: Number(upstream.port || 5432) });
  const clock = createTestClock();
  let app: FastifyInstance;
  let database: Database;
  let kv: KeyValueStore;
  beforeAll(async () => {
    const port = await relay.start();
    [database, kv] = await Promise.all([
      openTestDatabase({ viaUrl: (url) => url.replace(`${upstream.host}`, `127.0.0.1:${port}`) }),
      openTestKeyValueStore(),
    ]);
    app = await buildApp(testConfig(), { database, kv, clock }, { logger: false });
  });
  afterAll(async () => {
    await app?.close();
    await Promise.all([kv?.close(), database?.close()]);
  });

  it('answers 503 naming the database while it is gone, health says which, and recovers without a restart', async () => {
    const admin = await login(app, 'admin', TEST_ADMIN.password);
    const devices = () => client(app, admin).get('/v1/devices');
    const health = () => client(app).get('/v1/health');
    expect((await devices()).status).toBe(200);

    await relay.stop();
    clock.advance(1000);
    const refused = await devices();
    expect({ status: refused.status, body: refused.body }).toEqual({
      status: 503,
      body: {
        error: 'ServiceUnavailable',
        message: 'The database is unavailable; try again shortly',
        code: 'database.unavailable',
      },
    });
    const down = await health();
    expect(down.status).toBe(503);
    expect(down.body).toMatchObject({
      status: 'unhealthy',
      services: { database: { status: 'down' }, cache: { status: 'up' } },
    });

    await relay.start();
    clock.advance(1000);
    await expect.poll(async () => (await devices()).status, { timeout: 10_000 }).toBe(200);
    expect((await health()).body).toMatchObject({ status: 'healthy' });
  });
});
