import { existsSync, mkdirSync } from 'node:fs';
import { lockDataDir } from './data-dir-lock.js';
import { join } from 'node:path';
import { Kysely, PostgresDialect, sql, type LogEvent } from 'kysely';
import { PGliteDialect } from './pglite-dialect.js';
import { preparingClient } from './prepared.js';
import type { Schema } from './schema/index.js';

export type DatabaseTarget =
  | {
      kind: 'embedded';
      dataDir?: string;
      loadDataDir?: Blob;
      sharedBuffers?: string;
      /** On disk only: `durable` (the default) flushes every commit to the disk, `relaxed` leaves it to the OS. */
      durability?: 'durable' | 'relaxed';
    }
  | { kind: 'postgres'; url: string; poolSize?: number };

export interface Database {
  readonly kind: DatabaseTarget['kind'];
  readonly db: Kysely<Schema>;
  ping(): Promise<void>;
  close(): Promise<void>;
  /** Embedded only: a tarball of the data directory (a consistent copy, e.g. for backups or test templates). */
  dump?(compression?: 'none' | 'gzip'): Promise<Blob>;
  /** Calls `listener` after every statement with its duration (for the metrics); one listener. */
  observeQueries(listener: QueryListener): void;
  /** Connections of the pool now (the embedded database has one, never waited for in a pool). */
  connections(): { total: number; idle: number; waiting: number };
}

export type QueryListener = (durationMs: number, failed: boolean) => void;

/** Kysely times each statement only when it has a logger; this one forwards to whoever observes. */
function queryObserver() {
  let listener: QueryListener | undefined;
  return {
    log: (event: LogEvent) => listener?.(event.queryDurationMillis, event.level === 'error'),
    observeQueries: (next: QueryListener) => {
      listener = next;
    },
  };
}

const INT8_OID = 20;
const NUMERIC_OID = 1700;

// Counts (int8) and numeric columns come back as JavaScript numbers on both back
// ends; the values we store in them stay far below 2^53.
const numericParsers = { [INT8_OID]: Number, [NUMERIC_OID]: Number };

/** True when an embedded data directory has been initialised (PostgreSQL writes PG_VERSION at initdb). */
export function embeddedDataDirExists(dataDir: string): boolean {
  return existsSync(join(dataDir, 'PG_VERSION'));
}

// Each back end's driver is imported when it is opened, so a process loads only the one it uses
// (the embedded default's idle memory matters; pg and PGlite together cost tens of megabytes).
export async function openDatabase(target: DatabaseTarget): Promise<Database> {
  return target.kind === 'embedded' ? openEmbedded(target) : openPostgres(target);
}

async function openEmbedded(target: Extract<DatabaseTarget, { kind: 'embedded' }>): Promise<Database> {
  if (target.dataDir) mkdirSync(target.dataDir, { recursive: true, mode: 0o700 });
  const release = target.dataDir ? lockDataDir(target.dataDir) : () => undefined;
  const { PGlite, parse } = await import('@electric-sql/pglite');
  const onDisk = target.dataDir
    ? await fileSystemFor(target.dataDir, target.durability ?? 'durable', PGlite.defaultStartParams)
    : undefined;
  const pglite = await PGlite.create({
    ...onDisk,
    parsers: numericParsers,
    // PostgreSQL's default 128MB of shared buffers costs ~140MB of resident memory in PGlite;
    // an embedded single-node service does well with less.
    postgresqlconf: [`shared_buffers=${target.sharedBuffers ?? '16MB'}`],
    ...(target.loadDataDir ? { loadDataDir: target.loadDataDir } : {}),
  }).catch((err: unknown) => {
    release();
    throw err;
  });
  const observer = queryObserver();
  const db = new Kysely<Schema>({ dialect: new PGliteDialect(pglite, parse.parseResults), log: observer.log });
  return {
    kind: 'embedded',
    db,
    observeQueries: observer.observeQueries,
    connections: () => ({ total: 1, idle: 1, waiting: 0 }),
    ping: () => selectOne(db),
    dump: (compression = 'none') => pglite.dumpDataDir(compression),
    close: async () => {
      await db.destroy();
      await pglite.close();
      release();
    },
  };
}

/** A data directory on disk: PGlite's file system for it and PostgreSQL's start parameters for its durability. */
async function fileSystemFor(dataDir: string, durability: 'durable' | 'relaxed', pgliteDefaults: readonly string[]) {
  const { NodeFS } = await import('@electric-sql/pglite/nodefs');
  const { DurableNodeFS, durableStartParams } = await import('./durable-nodefs.js');
  return durability === 'relaxed'
    ? { fs: new NodeFS(dataDir) }
    : { fs: new DurableNodeFS(dataDir), startParams: durableStartParams(pgliteDefaults) };
}

async function openPostgres(target: Extract<DatabaseTarget, { kind: 'postgres' }>): Promise<Database> {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({
    Client: preparingClient(pg.Client),
    connectionString: target.url,
    max: target.poolSize ?? 10,
    // A server that accepts connections but never answers (frozen, a dead network path) must not hold a
    // request forever: 503 database.unavailable after this long.
    connectionTimeoutMillis: 5000,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid in numericParsers
          ? numericParsers[oid as keyof typeof numericParsers]
          : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // An idle client that loses its server emits 'error'; without a listener the process would crash.
  pool.on('error', () => {});
  // So does a client that is checked out between two statements (a transaction) when its server goes: the
  // statement in progress or the next one fails and is answered 503; the event itself must not crash us.
  pool.on('connect', (client) => client.on('error', () => {}));
  const observer = queryObserver();
  const db = new Kysely<Schema>({ dialect: new PostgresDialect({ pool }), log: observer.log });
  await selectOne(db);
  return {
    kind: 'postgres',
    db,
    observeQueries: observer.observeQueries,
    connections: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    ping: () => selectOne(db),
    close: () => db.destroy(),
  };
}

async function selectOne(db: Kysely<Schema>): Promise<void> {
  await sql`select 1`.execute(db);
}
