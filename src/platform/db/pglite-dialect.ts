import type { PGlite, Results } from '@electric-sql/pglite';
import type { BackendMessage } from 'pg-protocol/dist/messages.js';
import { serialize } from 'pg-protocol';
import pgUtils from 'pg/lib/utils.js';
import {
  CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type Kysely,
  type QueryCompiler,
  type QueryResult,
} from 'kysely';

/**
 * Kysely dialect for embedded PGlite. Written here because the published
 * `kysely-pglite-dialect` does not support PGlite 0.5. PGlite is one database
 * session, so connections are handed out one at a time: a transaction holds the
 * session until it ends, and other queries wait for it.
 */
export class PGliteDialect implements Dialect {
  constructor(
    private readonly pglite: PGlite,
    private readonly parseResults: ParseResults,
  ) {}

  createAdapter(): DialectAdapter {
    return new PostgresAdapter();
  }
  createDriver(): Driver {
    return new PGliteDriver(this.pglite, this.parseResults);
  }
  createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new PostgresIntrospector(db);
  }
  createQueryCompiler(): QueryCompiler {
    return new PostgresQueryCompiler();
  }
}

const ACQUIRE_TIMEOUT_MS = 30_000;
// The usual cause: code inside a transaction that queries through `db` instead of `trx`,
// which waits forever for the one connection its own transaction holds.
const STUCK_MESSAGE = 'Timed out waiting for the embedded database connection (a query outside its transaction?)';

class PGliteDriver implements Driver {
  readonly #connection: PGliteConnection;
  #queue: Promise<void> = Promise.resolve();

  constructor(pglite: PGlite, parseResults: ParseResults) {
    this.#connection = new PGliteConnection(pglite, parseResults);
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    let release!: () => void;
    const previous = this.#queue;
    this.#queue = new Promise<void>((resolve) => (release = resolve));
    let timer: NodeJS.Timeout | undefined;
    const stuck = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(STUCK_MESSAGE)), ACQUIRE_TIMEOUT_MS);
    });
    try {
      await Promise.race([previous, stuck]);
    } catch (error) {
      // Leave our place in the queue so later queries are not blocked behind us as well.
      void previous.then(release);
      throw error;
    } finally {
      clearTimeout(timer);
    }
    this.#connection.release = release;
    return this.#connection;
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin'));
  }
  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }
  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    (connection as PGliteConnection).release();
  }

  // The PGlite instance is owned (and closed) by whoever created it.
  async destroy(): Promise<void> {}
}

/** PGlite's own reader of a statement's backend messages into rows, with the instance's type parsers. */
export type ParseResults = (messages: BackendMessage[], parsers: PGlite['parsers']) => Results[];

class PGliteConnection implements DatabaseConnection {
  release: () => void = () => {};

  constructor(
    private readonly pglite: PGlite,
    private readonly parseResults: ParseResults,
  ) {}

  // Like node-postgres, a query without parameters goes over the simple query
  // protocol, so a migration script with several statements runs the same on both.
  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const result =
      query.parameters.length === 0 ? (await this.pglite.exec(query.sql)).at(-1) : await this.#extended(query);
    const rows = (result?.rows ?? []) as R[];
    return result?.affectedRows === undefined ? { rows } : { rows, numAffectedRows: BigInt(result.affectedRows) };
  }

  /**
   * A statement with parameters as node-postgres sends it: parse, bind, describe, execute and sync in one
   * message, the values as text of unknown type (pg's own conversion), so the server infers their types
   * exactly as on the PostgreSQL back end. (PGlite's `query` first asks the server for the parameter
   * types, and makes a call into the database for each of six messages: two and a half times the
   * overhead of a short statement.)
   */
  #extended(query: CompiledQuery): Promise<Results | undefined> {
    const message = Buffer.concat([
      serialize.parse({ text: query.sql, types: [] }),
      serialize.bind({ values: query.parameters.map((value) => pgUtils.prepareValue(value)) }),
      serialize.describe({ type: 'P' }),
      serialize.execute({}),
      serialize.sync(),
    ]);
    return this.pglite.runExclusive(async () => {
      const { messages } = await this.pglite.execProtocol(message);
      return this.parseResults(messages, this.pglite.parsers)[0];
    });
  }

  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('Streaming queries are not supported on the embedded database');
  }
}
