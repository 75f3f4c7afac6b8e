import { createHash } from 'node:crypto';
import type { CompiledQuery } from 'kysely';
import type pg from 'pg';

/**
 * Statements worth preparing once per connection: PostgreSQL then parses a statement once and, after a few
 * runs, reuses its plan, where an unnamed statement is parsed and planned on every run (a third of the
 * server's work per GPS point when points come one per request). By SQL text; a hot statement has a handful
 * of shapes at most, and the cap keeps a mistake from preparing statements without end on every connection.
 */
const names = new Map<string, string>();
const MAX_PREPARED = 64;

/**
 * Marks a compiled query to run as a named prepared statement on PostgreSQL (the embedded database runs it as
 * any other). Returns the query, for `db.executeQuery(prepared(query.compile()))`.
 */
export function prepared<R>(query: CompiledQuery<R>): CompiledQuery<R> {
  if (!names.has(query.sql) && names.size < MAX_PREPARED) {
    names.set(query.sql, `waygate_${createHash('sha256').update(query.sql).digest('hex').slice(0, 24)}`);
  }
  return query;
}

/**
 * The pool's client class: a query whose text was marked by `prepared` goes out as a named statement, every
 * other one as before. (Behind PgBouncer in transaction mode this needs PgBouncer 1.21 or later with
 * max_prepared_statements set; see docs/configuration.md.)
 */
export function preparingClient(Client: typeof pg.Client): typeof pg.Client {
  return class PreparingClient extends Client {
    // pg's query() has a dozen overloads; Kysely calls the (text, values) one, which is the one renamed here.
    override query(...args: unknown[]): never {
      const [text, values] = args;
      const name = typeof text === 'string' && args.length === 2 ? names.get(text) : undefined;
      const query = super.query as (...a: unknown[]) => never;
      return name ? query.call(this, { name, text, values }) : query.apply(this, args);
    }
  } as typeof pg.Client;
}
