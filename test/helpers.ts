import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import pg from 'pg';
import type { FastifyInstance } from 'fastify';
import { CompiledQuery, sql, type Compilable, type KyselyPlugin } from 'kysely';
import { expect, inject } from 'vitest';
import { buildApp, type BuildOptions } from '../src/app.js';
import { loadConfig, type Config } from '../src/config.js';
import { openDatabase, type Database } from '../src/platform/db/database.js';
import { openKeyValueStore, type KeyValueStore } from '../src/platform/kv/index.js';
import { withDatabaseName } from './database-url.js';
import { createTestClock, type TestClock } from './clock.js';
import { startFakeSmtp, type FakeSmtp } from './fakes/smtp.js';
import { watchErrorResponses } from './documented-errors.js';
import { roundRobin } from './round-robin.js';
import { client, type Client } from './client.js';

/**
 * 'embedded' (PGlite + in-process store), 'external' (PostgreSQL and/or Redis from TEST_*_URL), or
 * 'two-nodes' (the same PostgreSQL and Redis, each test app being two nodes behind a round robin).
 */
export const backend =
  (['external', 'two-nodes'] as const).find((name) => name === process.env.WAYGATE_TEST_BACKEND) ?? 'embedded';
export const twoNodes = backend === 'two-nodes';
export const usesPostgres = backend !== 'embedded' && Boolean(process.env.TEST_DATABASE_URL);
export const usesRedis = backend !== 'embedded' && Boolean(process.env.TEST_REDIS_URL);

/** A fresh, migrated database of this run's back end: a clone of the template made by global-setup. */
export async function openTestDatabase(options: { viaUrl?: (url: string) => string } = {}): Promise<Database> {
  if (!usesPostgres) {
    const template = readFileSync(inject('pgliteTemplate'));
    return openDatabase({ kind: 'embedded', loadDataDir: new Blob([template]) });
  }
  const { url, drop } = await createTestPostgresDatabase();
  // `viaUrl` lets a test reach the server through something it can cut (a proxy standing in for an outage).
  const database = await openDatabase({
    kind: 'postgres',
    url: (options.viaUrl ?? ((same) => same))(url),
    poolSize: 5,
  });
  return {
    ...database,
    close: async () => {
      await database.close();
      await drop();
    },
  };
}

/** A fresh PostgreSQL database cloned from the run's migrated template: its URL, and how to drop it. */
async function createTestPostgresDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const server = process.env.TEST_DATABASE_URL!;
  const name = `${inject('postgresTemplate')}_c${randomUUID().replaceAll('-', '').slice(0, 10)}`;
  await withAdminClient(server, (admin) =>
    admin.query(`create database ${name} template ${inject('postgresTemplate')}`),
  );
  const drop = () =>
    withAdminClient(server, (admin) => admin.query(`drop database if exists ${name} with (force)`)).then(
      () => undefined,
    );
  return { url: withDatabaseName(server, name), drop };
}

/**
 * The run's key-value store; on Redis each call gets its own namespace so test files never share keys
 * (unless given one: the nodes of one two-node app share theirs).
 */
export function openTestKeyValueStore(namespace = `test:${randomUUID()}:`): Promise<KeyValueStore> {
  return usesRedis
    ? openKeyValueStore({ kind: 'redis', url: process.env.TEST_REDIS_URL!, namespace })
    : openKeyValueStore({ kind: 'memory' });
}

export const TEST_ADMIN = { email: 'admin@waygate.test', username: 'admin', password: 'admin-password-1' };
export const TEST_SYSTEM_KEY = 'wg_test_system_key_0123456789abcdefghijklmnop';

/** Test configuration: a bootstrap super admin and a system key exist in every test app. */
export function testConfig(overrides: Partial<Config> = {}): Config {
  return {
    ...loadConfig({ LOG_LEVEL: 'silent' }),
    // Mail outbox and generated keys go to a throwaway directory, never the repository's ./data.
    dataDir: mkdtempSync(join(tmpdir(), 'waygate-test-')),
    secretKey: 'test-secret-key-for-sealing-secrets-at-rest',
    bootstrapAdmin: TEST_ADMIN,
    systemApiKey: TEST_SYSTEM_KEY,
    ...overrides,
  };
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** Signs in over HTTP and returns the session token. */
export async function login(app: FastifyInstance, identifier: string, password: string): Promise<string> {
  const response = await app.inject({ method: 'POST', url: '/v1/auth/login', payload: { identifier, password } });
  if (response.statusCode !== 200) throw new Error(`login failed: ${response.statusCode} ${response.body}`);
  return response.json().session_token as string;
}

let userCounter = 0;

/**
 * A user with an email/password account and these roles, signed in. (Created
 * through the users service until registration lands with the accounts area.)
 */
export async function createUser(app: FastifyInstance, roles: string[] = ['role_user']) {
  const username = `user_${process.pid}_${++userCounter}`;
  const password = 'correct-horse-battery';
  const { users, access } = app.services;
  const user = await app.database.db.transaction().execute(async (trx) => {
    const created = await users.createEmailUser(trx, { username, email: `${username}@example.org`, password });
    for (const role of roles) await access.grantRoleDirectly(created.id, role, trx);
    return created;
  });
  return { id: user.id, username, password, token: await login(app, username, password) };
}

/** A custom role holding exactly these permissions (created directly, for test setup). */
export async function createRoleWith(app: FastifyInstance, name: string, permissions: string[]): Promise<string> {
  const role = await app.services.access.createRole({ name });
  const catalogue = await app.services.access.listPermissions();
  for (const permission of permissions) {
    const found = catalogue.find((p) => `${p.resource}:${p.action}` === permission);
    if (!found) throw new Error(`no permission ${permission}`);
    await app.database.db
      .insertInto('role_permissions')
      .values({ role_id: role.id, permission_id: found.id })
      .execute();
  }
  return role.id;
}

/** Creates an API key over HTTP as `token`; returns the created body. */
export async function createApiKey(app: FastifyInstance, token: string, body: Record<string, unknown>) {
  const response = await app.inject({ method: 'POST', url: '/v1/api-keys', headers: bearer(token), payload: body });
  if (response.statusCode !== 201) throw new Error(`key creation failed: ${response.statusCode} ${response.body}`);
  return response.json() as { id: string; key: string; name: string; scopes: string[]; expires_at: string | null };
}

/** A new device linked to a new API key of `token`'s user (by default with gps:write): what a tracker reports with. */
export async function deviceWithKey(
  app: FastifyInstance,
  token: string,
  options: { name?: string; scopes?: string[] } = {},
) {
  const name = options.name ?? 'tracker';
  const key = await createApiKey(app, token, { name, scopes: options.scopes ?? ['gps:write'] });
  const response = await app.inject({
    method: 'POST',
    url: '/v1/devices',
    headers: bearer(token),
    payload: { name, api_key_id: key.id },
  });
  if (response.statusCode !== 201) throw new Error(`device creation failed: ${response.statusCode} ${response.body}`);
  return { key: key.key, keyId: key.id, deviceId: response.json().data.id as string };
}

export interface TestApp {
  app: FastifyInstance;
  /** The app's nodes: the app itself, or on 'two-nodes' the two behind it (to wait for work each does in the background). */
  nodes: FastifyInstance[];
  database: Database;
  kv: KeyValueStore;
  config: Config;
  /** The app's clock: `t.clock.advance(ms)` moves time for expiry rules without waiting. */
  clock: TestClock;
  /** JSON log lines written so far (only when built with `captureLogs`). */
  logs: () => Record<string, unknown>[];
  /** The typed request helper sending `token` as the bearer, or none (test/client.ts). */
  as(token?: string | null): Client;
  close(): Promise<void>;
}

export interface TestAppOptions extends Pick<BuildOptions, 'extraRoutes'> {
  config?: Partial<Config>;
  captureLogs?: boolean;
}

/** Waits for work each node of `t` does in the background (notices being mailed, files being imported). */
export async function onEveryNode(
  t: TestApp,
  work: (services: FastifyInstance['services']) => Promise<void>,
): Promise<void> {
  await Promise.all(t.nodes.map((node) => work(node.services)));
}

/**
 * Builds the real app on a fresh database and store of this run's back end; on 'two-nodes', two apps
 * on one fresh database and store, seen through a round robin (see buildTwoNodes).
 */
export async function buildTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const config = testConfig(options.config);
  const lines: string[] = [];
  let logger: BuildOptions['logger'] = false;
  if (options.captureLogs) {
    const stream = new PassThrough();
    stream.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)));
    logger = { stream };
    config.logLevel = options.config?.logLevel ?? 'info';
  }
  const clock = createTestClock();
  const build = (database: Database, kv: KeyValueStore) =>
    buildApp(
      config,
      { database, kv, clock },
      { logger, extraRoutes: options.extraRoutes, instrument: watchErrorResponses, scheduledJobs: false },
    );
  const logs = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  if (twoNodes) {
    const nodes = await buildTwoNodes(build);
    return { ...nodes, config, clock, logs, as: (token) => client(nodes.app, token) };
  }
  const [database, kv] = await Promise.all([openTestDatabase(), openTestKeyValueStore()]);
  const app = await build(database, kv);
  return {
    app,
    nodes: [app],
    database,
    kv,
    config,
    clock,
    logs,
    as: (token) => client(app, token),
    close: async () => {
      await app.close();
      await Promise.all([kv.close(), database.close()]);
    },
  };
}

/**
 * Two nodes as two `serve` processes behind a round-robin proxy would be: two apps, each with its own
 * connection pool, Redis connections, caches and in-process state, on one fresh PostgreSQL database and
 * one Redis namespace, sharing only the test clock (as nodes share the wall clock); the app seen by the
 * test sends each request to the other node than the last (test/round-robin.ts). `database` and `kv`
 * are the first node's handles on the shared database and store.
 */
async function buildTwoNodes(build: (database: Database, kv: KeyValueStore) => Promise<FastifyInstance>) {
  const { url, drop } = await createTestPostgresDatabase();
  const namespace = `test:${randomUUID()}:`;
  const handles = await Promise.all(
    [0, 1].map(async () => {
      const [database, kv] = await Promise.all([
        openDatabase({ kind: 'postgres', url, poolSize: 5 }),
        openTestKeyValueStore(namespace),
      ]);
      return { database, kv };
    }),
  );
  // One after the other, as the second node of a deployment starts on a database the first has set up.
  const nodes: FastifyInstance[] = [];
  for (const { database, kv } of handles) nodes.push(await build(database, kv));
  const app = roundRobin(nodes as [FastifyInstance, FastifyInstance]);
  return {
    app,
    nodes,
    database: handles[0]!.database,
    kv: handles[0]!.kv,
    close: async () => {
      await app.close();
      await Promise.all(handles.flatMap(({ database, kv }) => [kv.close(), database.close()]));
      await drop();
    },
  };
}

/** A test app that mails through a fake SMTP server of its own; closing the app stops the server too. */
export async function buildMailingTestApp(options: TestAppOptions = {}): Promise<{ t: TestApp; smtp: FakeSmtp }> {
  const smtp = await startFakeSmtp();
  const t = await buildTestApp({ ...options, config: { smtpUrl: smtp.url, ...options.config } });
  const closeApp = t.close;
  t.close = async () => {
    await closeApp();
    await smtp.close();
  };
  return { t, smtp };
}

async function withAdminClient<T>(url: string, fn: (admin: pg.Client) => Promise<T>): Promise<T> {
  const adminClient = new pg.Client({ connectionString: url });
  await adminClient.connect();
  try {
    return await fn(adminClient);
  } finally {
    await adminClient.end();
  }
}

/** The body of a completed sign-in (login, register/verify, 2FA verify) with nothing left to confirm. */
export function signedInBody(user: { email: string; username: string; user_id?: string }) {
  return {
    user_id: user.user_id ?? expect.stringMatching(/^[0-9a-f-]{36}$/),
    email: user.email,
    username: user.username,
    session_token: expect.stringMatching(/^ses_[A-Za-z0-9_-]{43}$/),
    session_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    expires_at: expect.any(String),
    provider: 'email',
    requires_2fa: false,
    temp_token: null,
    preferred_locale: null,
  };
}

/** `expiresAt` lies `hours` ahead (to within six minutes: the time the test took). */
export function expectExpiresIn(expiresAt: string, hours: number): void {
  const ahead = (Date.parse(expiresAt) - Date.now()) / 3_600_000;
  expect(ahead).toBeGreaterThan(hours - 0.1);
  expect(ahead).toBeLessThanOrEqual(hours);
}

/** The guard's refusals, exactly as every route answers them. */
export const UNAUTHORIZED = {
  error: 'Unauthorized',
  message: 'Invalid or missing authentication token',
  code: 'auth.unauthorized',
};
export const FORBIDDEN = {
  error: 'Forbidden',
  message: 'Insufficient permissions for this operation',
  code: 'auth.forbidden',
};
/** The guard's 403 for a caller lacking `permission`: it names what is missing. */
export const forbidden = (permission: string) => ({
  ...FORBIDDEN,
  message: `${FORBIDDEN.message}: requires ${permission}`,
});

/** The user id of the bootstrap admin (TEST_ADMIN). */
export async function adminIdOf(t: TestApp): Promise<string> {
  return (
    await t.database.db
      .selectFrom('users')
      .select('id')
      .where('username', '=', TEST_ADMIN.username)
      .executeTakeFirstOrThrow()
  ).id;
}

/** An API key with no owner (as an operator might create one in the database), holding these scopes. */
export async function ownerlessKey(t: TestApp, scopes: string[]): Promise<string> {
  const key = `wg_ownerless_${randomUUID()}`;
  await t.database.db
    .insertInto('api_keys')
    .values({
      key_hash: createHash('sha256').update(key).digest('hex'),
      key_prefix: key.slice(0, 11),
      name: 'ownerless',
      scopes,
      user_id: null,
    })
    .execute();
  return key;
}

/** A port nobody listens on now, so a URL (PUBLIC_URL, a server's address) can be known before listening on it. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A well-formed id that names nothing. */
export const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

export interface GuardedRoute {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  permission: string;
  payload?: object;
}

/**
 * Each route refuses a key that holds every other permission of the list with 403, and lets a
 * key holding just its own permission past the check: a route guarded by the wrong permission fails.
 */
export async function expectPermissionChecks(
  app: FastifyInstance,
  adminToken: string,
  routes: GuardedRoute[],
): Promise<void> {
  const all = [...new Set(routes.map((r) => r.permission))];
  if (all.length < 2) throw new Error('expectPermissionChecks needs routes of at least two permissions');
  const keys = new Map<string, { without: string; only: string }>();
  for (const permission of all) {
    const others = all.filter((p) => p !== permission);
    const without = (await createApiKey(app, adminToken, { name: `without ${permission}`, scopes: others })).key;
    const only = (await createApiKey(app, adminToken, { name: `only ${permission}`, scopes: [permission] })).key;
    keys.set(permission, { without, only });
  }
  for (const { method, url, permission, payload } of routes) {
    const { without, only } = keys.get(permission)!;
    const refused = await app.inject({ method, url, payload, headers: bearer(without) });
    expect({ method, url, status: refused.statusCode, body: refused.json() }).toEqual({
      method,
      url,
      status: 403,
      body: forbidden(permission),
    });
    // Past the permission check: any answer of the route itself (200, 400, 404, ...), never 401/403 or 5xx.
    const allowed = await app.inject({ method, url, payload, headers: bearer(only) });
    expect({ method, url, passed: allowed.statusCode < 500 && ![401, 403].includes(allowed.statusCode) }).toEqual({
      method,
      url,
      passed: true,
    });
  }
}

/**
 * The id rules every resource shares: an unknown id answers 404 with the resource's not-found error on
 * GET, PATCH and DELETE of `<collection>/{id}`, and an id that is not a UUID answers 400 naming the parameter.
 */
export async function expectIdChecks(
  app: FastifyInstance,
  token: string,
  collection: string,
  notFound: { message: string; code: string },
): Promise<void> {
  for (const [method, payload] of [
    ['GET', undefined],
    ['PATCH', { name: 'x' }],
    ['DELETE', undefined],
  ] as const) {
    const response = await app.inject({ method, url: `${collection}/${UNKNOWN_ID}`, headers: bearer(token), payload });
    expect({ method, status: response.statusCode, body: response.json() }).toEqual({
      method,
      status: 404,
      body: { error: 'NotFound', ...notFound },
    });
  }
  const malformed = await app.inject({ method: 'GET', url: `${collection}/not-a-uuid`, headers: bearer(token) });
  expect({ status: malformed.statusCode, body: malformed.json() }).toEqual({
    status: 400,
    body: { error: 'BadRequest', message: `Path parameter 'id' must match format "uuid"`, code: 'request.validation' },
  });
}

/**
 * The database with every SQL statement run counted (to prove a request runs few, or none): counted as each
 * one's result comes back, so a statement compiled once and run again counts every time, and a subquery counts
 * as part of its statement (a statement that fails is not counted).
 */
export function countingStatements(database: Database): { database: Database; count: () => number } {
  let statements = 0;
  const plugin: KyselyPlugin = {
    transformQuery: (args) => args.node,
    transformResult: async (args) => {
      statements++;
      return args.result;
    },
  };
  return { database: { ...database, db: database.db.withPlugin(plugin) }, count: () => statements };
}

/**
 * The database with the SQL text of every statement kept as it is sent, `begin` and `commit` included (to prove
 * a code path runs only the statements it should, not just how many): every connection the app is handed,
 * in or out of a transaction, passes each statement through here on its way to the driver.
 */
export function recordingStatements(database: Database): { database: Database; statements: string[] } {
  const statements: string[] = [];
  const db = database.db.withoutPlugins();
  const executor = db.getExecutor();
  const provide = executor.provideConnection.bind(executor);
  executor.provideConnection = (consumer) =>
    provide((connection) =>
      consumer({
        executeQuery: (query) => {
          statements.push(query.sql);
          return connection.executeQuery(query);
        },
        streamQuery: (query, chunkSize) => {
          statements.push(query.sql);
          return connection.streamQuery(query, chunkSize);
        },
      }),
    );
  return { database: { ...database, db }, statements };
}

/**
 * The plan of a query the code runs, its parameters bound as the code binds them, with the planner's
 * `disabled` methods (e.g. `enable_seqscan`) priced out: a small test table would rightly prefer a scan,
 * so a plan test turns scans off and checks that an index can answer.
 */
export async function planOf(database: Database, query: Compilable, disabled: string[]): Promise<string> {
  return database.db.transaction().execute(async (trx) => {
    for (const setting of disabled) await sql.raw(`set local ${setting} = off`).execute(trx);
    const compiled = query.compile();
    const { rows } = await trx.executeQuery<{ 'QUERY PLAN': string }>(
      CompiledQuery.raw(`explain ${compiled.sql}`, [...compiled.parameters]),
    );
    return rows.map((row) => row['QUERY PLAN']).join('\n');
  });
}
