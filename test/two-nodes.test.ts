import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { withDatabaseName } from './database-url.js';
import { bearer, TEST_ADMIN, TEST_SYSTEM_KEY, usesPostgres, usesRedis } from './helpers.js';
import { openSocket, refusedHandshake, socketAs, type TestSocket } from './ws-client.js';

/** Nodes on one database share the key of secrets at rest, as the README says (a start with another key stops). */
const SHARED_SECRET_KEY = 'two-nodes-test-secret-key-shared-by-both-nodes';

const MAIN = join(import.meta.dirname, '..', 'dist', 'main.js');

interface Node {
  url: string;
  stop(): Promise<number | null>;
}

/** The parent's environment without anything that would point a node at another database or store. */
function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !/^(DATABASE_URL|REDIS_|PORT|DATA_DIR|TEST_)/.test(name)) env[name] = value;
  }
  return env;
}

/** Starts `waygate serve` and resolves with its address once it listens (or fails with what it printed). */
function startNode(env: Record<string, string>): Promise<Node> {
  const dataDir = mkdtempSync(join(tmpdir(), 'waygate-node-'));
  const child: ChildProcess = spawn(process.execPath, [MAIN, 'serve'], {
    env: {
      ...cleanEnv(),
      SECRET_KEY: SHARED_SECRET_KEY,
      ...env,
      DATA_DIR: dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
    },
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const stop = async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    const code = await exited;
    rmSync(dataDir, { recursive: true, force: true });
    return code;
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`no address within 30 s:\n${output}`));
      void stop();
    }, 30_000);
    child.stdout!.on('data', () => {
      const address = /"address":"(http:[^"]+)"/.exec(output)?.[1];
      if (address) {
        clearTimeout(timer);
        resolve({ url: address, stop });
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before listening:\n${output}`));
    });
  });
}

async function withAdminClient<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

async function post(url: string, token: string, body?: object) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { ...bearer(token), ...(body && { 'content-type': 'application/json' }) },
    body: body && JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const POINT = {
  latitude: 53.55,
  longitude: 9.99,
  altitude: 3,
  heading: 270,
  timestamp: 1_767_225_600,
  speed_kmh: 18.52,
  speed_mps: 5.14,
  speed_mph: 11.51,
  speed_knots: 10,
};

// What crosses nodes (pub/sub, single-use tickets, sign-out broadcasts) only does so through Redis.
describe.runIf(usesPostgres && usesRedis)('two nodes on one PostgreSQL and Redis', () => {
  let database: string;
  const nodes: Node[] = [];
  const sockets: TestSocket[] = [];
  let a: string;
  let b: string;
  let session: string;

  beforeAll(async () => {
    if (!existsSync(MAIN)) throw new Error('dist/main.js is missing: npm test builds it first');
    // Prefixed with the run's template so global-setup's sweep drops it even if afterAll never runs.
    database = `${inject('postgresTemplate')}_nodes${randomUUID().replaceAll('-', '').slice(0, 10)}`;
    await withAdminClient((client) => client.query(`create database ${database}`));
    const env = {
      DATABASE_URL: withDatabaseName(process.env.TEST_DATABASE_URL!, database),
      REDIS_URL: process.env.TEST_REDIS_URL!,
      REDIS_PREFIX: `test:${randomUUID()}:`,
      RATE_LIMIT_ENABLED: 'false',
      SYSTEM_API_KEY: TEST_SYSTEM_KEY,
      BOOTSTRAP_ADMIN_EMAIL: TEST_ADMIN.email,
      BOOTSTRAP_ADMIN_USERNAME: TEST_ADMIN.username,
      BOOTSTRAP_ADMIN_PASSWORD: TEST_ADMIN.password,
    };
    // One after the other: the first migrates the empty database, the second finds it up to date.
    nodes.push(await startNode(env));
    nodes.push(await startNode(env));
    [a, b] = nodes.map((node) => node.url) as [string, string];

    const signIn = await fetch(`${a}/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ identifier: TEST_ADMIN.email, password: TEST_ADMIN.password }),
    });
    expect(signIn.status).toBe(200);
    session = ((await signIn.json()) as { session_token: string }).session_token;
  });

  afterAll(async () => {
    for (const socket of sockets) socket.close();
    const codes = await Promise.all(nodes.map((node) => node.stop()));
    if (database) await withAdminClient((client) => client.query(`drop database if exists ${database} with (force)`));
    expect(codes).toEqual(nodes.map(() => 0));
  });

  const adminSocketOn = async (base: string) => {
    const socket = await socketAs(base, session);
    sockets.push(socket);
    return socket;
  };

  it('a point recorded on node A reaches a gps subscriber on node B', async () => {
    const socket = await adminSocketOn(b);
    await socket.request({ type: 'Subscribe', channel: 'gps', id: 'gps' }, 'Subscribed');
    const created = await post(`${a}/v1/gps`, session, POINT);
    expect(created.status).toBe(201);
    expect((await socket.next('GpsPoint')).data).toEqual(created.body.data);
  });

  it('logout-everywhere on node A signs out the socket on node B', async () => {
    const socket = await adminSocketOn(b);
    expect((await post(`${a}/v1/auth/logout-everywhere`, session, { reason: 'lost_phone' })).status).toBe(200);
    expect(await socket.next('forceLogout')).toEqual({ type: 'forceLogout', reason: 'lost_phone' });
    expect((await socket.closed).code).toBe(4001);
  });

  it('a ticket minted on node A opens a socket on node B, once', async () => {
    const minted = await post(`${a}/v1/ws/ticket`, session);
    expect(minted).toEqual({ status: 200, body: { ticket: expect.any(String), expiresIn: 30 } });
    const ticket = minted.body.ticket as string;

    const socket = await openSocket(b, { protocols: ['service-ticket', ticket] });
    sockets.push(socket);
    expect(socket.socket.protocol).toBe('service-ticket');
    await socket.next('Welcome');
    // The claim is in Redis, so the other node knows the ticket is spent.
    expect((await refusedHandshake(a, { protocols: ['service-ticket', ticket] })).status).toBe(401);
  });

  it('a job run now on node A is seen, with its outcome, on node B (one record in the database)', async () => {
    // A session of its own: another test here signs the shared one out everywhere.
    const signIn = await fetch(`${b}/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ identifier: TEST_ADMIN.email, password: TEST_ADMIN.password }),
    });
    const token = ((await signIn.json()) as { session_token: string }).session_token;
    const run = await post(`${a}/v1/system/jobs/purge-expired/run`, token);
    expect(run.status).toBe(200);
    expect(run.body.data).toMatchObject({ name: 'purge-expired', running: false, last_outcome: 'succeeded', runs: 1 });
    const listed = (await (await fetch(`${b}/v1/system/jobs`, { headers: bearer(token) })).json()) as {
      data: { name: string }[];
    };
    expect(listed.data.find((job) => job.name === 'purge-expired')).toEqual(run.body.data);
  });
});
