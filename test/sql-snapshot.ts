import {
  CompiledQuery,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
} from 'kysely';
import { format } from 'sql-formatter';
import type { Clock } from '../src/platform/clock.js';
import type { Schema } from '../src/platform/db/schema/index.js';

/** The instant every SQL snapshot's clock reads: parameters taken from the clock are the same on every run. */
export const SNAPSHOT_NOW = new Date('2026-03-14T12:00:00.000Z');
export const snapshotClock: Clock = { now: () => new Date(SNAPSHOT_NOW), nowMs: () => SNAPSHOT_NOW.getTime() };

/**
 * Rows for the platform's list totals (platform/db/count.ts): the planner's estimate (`explain`) and the capped
 * count; no rows for anything else.
 */
function defaultAnswer(query: CompiledQuery): unknown[] {
  if (query.sql.startsWith('explain (format json)')) return [{ 'QUERY PLAN': [{ Plan: { 'Plan Rows': 1 } }] }];
  if (query.sql.startsWith('select count(*) as n from')) return [{ n: '1' }];
  return [];
}

/** A query as the snapshot shows it: `-- name`, the SQL pretty-printed, its parameters as JSON. */
const entry = (name: string, query: CompiledQuery) =>
  `-- ${name}\n${format(query.sql, { language: 'postgresql', tabWidth: 2 })};\n-- parameters: ${JSON.stringify(query.parameters)}\n`;

/**
 * SQL snapshots of a repo (`<file>.sql` beside it, matched with `toMatchFileSnapshot`): the repo runs on a Kysely
 * that compiles as both back ends do (Kysely's PostgreSQL adapter and compiler, which the PGlite and PostgreSQL
 * dialects both use) but reaches no database. Each query a call sends is recorded as compiled, parameters
 * included, and answered with the rows the test gives (else none, or a total of 1 for the count queries), so
 * the snapshot is what the repo sends, the same on every back end, with no database to open.
 */
export function sqlRecorder() {
  let sent: CompiledQuery[] = [];
  let answers: (unknown[] | undefined)[] = [];
  const connection: DatabaseConnection = {
    async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
      sent.push(query);
      return { rows: (answers.shift() ?? defaultAnswer(query)) as R[] };
    },
    async *streamQuery() {
      throw new Error('the SQL recorder does not stream');
    },
  };
  const raw = (text: string) => async (conn: DatabaseConnection) =>
    void (await conn.executeQuery(CompiledQuery.raw(text)));
  const driver: Driver = {
    init: async () => {},
    acquireConnection: async () => connection,
    beginTransaction: raw('begin'),
    commitTransaction: raw('commit'),
    rollbackTransaction: raw('rollback'),
    releaseConnection: async () => {},
    destroy: async () => {},
  };
  const db = new Kysely<Schema>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => driver,
      createIntrospector: (kysely) => new PostgresIntrospector(kysely),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  });
  let text = '';

  return {
    db,
    /**
     * Runs `call` and adds the queries it sends, in order, under `name` (numbered when there are several).
     * `rows`: the rows answering its first, second, ... query (the default answer where one is left out).
     */
    async record(name: string, call: () => Promise<unknown>, rows: (unknown[] | undefined)[] = []): Promise<void> {
      sent = [];
      answers = [...rows];
      await call();
      if (sent.length === 0) throw new Error(`${name} sent no query`);
      sent.forEach(
        (query, i) =>
          (text += (text ? '\n' : '') + entry(sent.length > 1 ? `${name} (${i + 1} of ${sent.length})` : name, query)),
      );
    },
    /** The snapshot's text: every query recorded so far. */
    text: () => text,
  };
}
