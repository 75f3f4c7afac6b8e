import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../app.js';
import { client } from '../../../test/client.js';
import { freePort, login, openTestKeyValueStore, TEST_ADMIN, testConfig, usesPostgres } from '../../../test/helpers.js';
import { createTestClock } from '../../../test/clock.js';
import { openDatabase, type Database } from './database.js';
import { migrate } from './migrate.js';
import type { KeyValueStore } from '../kv/index.js';

/** The newest PostgreSQL server binaries Debian installed (the CI machine's), if any. */
function serverBinaries(): string | undefined {
  const root = '/usr/lib/postgresql';
  const version = existsSync(root)
    ? readdirSync(root)
        .sort((a, b) => Number(a) - Number(b))
        .at(-1)
    : undefined;
  return version && existsSync(join(root, version, 'bin', 'initdb')) ? join(root, version, 'bin') : undefined;
}

const bin = serverBinaries();
// PostgreSQL refuses to run as root: as root, its commands run as the postgres user.
const asRoot = userInfo().uid === 0;
const command = (name: string, args: string[]): [string, string[]] =>
  asRoot ? ['runuser', ['-u', 'postgres', '--', join(bin!, name), ...args]] : [join(bin!, name), args];

/** A PostgreSQL server of the test's own, in a fresh directory, that the test stops and starts like an operator would. */
function ownServer(port: number) {
  const dir = mkdtempSync(join(tmpdir(), 'waygate-pg-'));
  if (asRoot) {
    const [uid, gid] = ['-u', '-g'].map((flag) =>
      Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout),
    );
    chownSync(dir, uid!, gid!);
  }
  const data = join(dir, 'data');
  let server: ChildProcess | undefined;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    init() {
      const [cmd, args] = command('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
      const result = spawnSync(cmd, args, { encoding: 'utf8' });
      if (result.status !== 0) throw new Error(`initdb failed: ${result.stderr}`);
    },
    async start() {
      const [cmd, args] = command('postgres', [
        '-D',
        data,
        '-p',
        String(port),
        '-k',
        dir,
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'fsync=off',
      ]);
      server = spawn(cmd, args, { stdio: 'ignore' });
      const [ready, readyArgs] = command('pg_isready', ['-q', '-h', '127.0.0.1', '-p', String(port)]);
      for (let waited = 0; spawnSync(ready, readyArgs).status !== 0; waited += 100) {
        if (waited > 15_000) throw new Error('PostgreSQL did not start');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    /** Every process of the server killed at once, as a crash or `kill -9` of the host would. */
    async kill() {
      const postmaster = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      const children = spawnSync('pgrep', ['-P', String(postmaster)], { encoding: 'utf8' })
        .stdout.split('\n')
        .filter(Boolean)
        .map(Number);
      for (const pid of [postmaster, ...children]) process.kill(pid, 'SIGKILL');
      await new Promise((resolve) => (server?.exitCode !== null ? resolve(undefined) : server.once('exit', resolve)));
      rmSync(join(data, 'postmaster.pid'), { force: true });
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

describe.runIf(usesPostgres && bin)('a PostgreSQL server process killed and started again', () => {
  const clock = createTestClock();
  let pg: ReturnType<typeof ownServer>;
  let app: FastifyInstance;
  let database: Database;
  let kv: KeyValueStore;
  beforeAll(async () => {
    pg = ownServer(await freePort());
    pg.init();
    await pg.start();
    [database, kv] = await Promise.all([
      openDatabase({ kind: 'postgres', url: pg.url, poolSize: 5 }),
      openTestKeyValueStore(),
    ]);
    await migrate(database.db);
    app = await buildApp(testConfig(), { database, kv, clock }, { logger: false });
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await Promise.all([kv?.close(), database?.close()]);
    await pg?.kill().catch(() => undefined);
    pg?.remove();
  });

  it('answers 503 naming the database while it is down, health says which, and recovers without a restart', async () => {
    const admin = await login(app, 'admin', TEST_ADMIN.password);
    const devices = () => client(app, admin).get('/v1/devices');
    expect((await devices()).status).toBe(200);

    await pg.kill();
    clock.advance(1000);
    const refused = await devices();
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({ code: 'database.unavailable' });
    const health = await client(app).get('/v1/health');
    expect(health.status).toBe(503);
    expect(health.body).toMatchObject({ status: 'unhealthy', services: { database: { status: 'down' } } });

    await pg.start();
    clock.advance(1000);
    await expect.poll(async () => (await devices()).status, { timeout: 15_000 }).toBe(200);
    expect((await client(app).get('/v1/health')).body).toMatchObject({
      services: { database: { status: 'up' } },
    });
  }, 60_000);
});
