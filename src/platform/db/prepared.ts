import { createHash } from 'node:crypto';
import type { CompiledQuery } from 'kysely';
import type pg from 'pg';
import { setRecent } from '../recent.js';

/**
 * Statements worth preparing once per connection: PostgreSQL then parses a statement once and, from its sixth
 * run, reuses a generic plan (for the GPS insert, which unnests its arrays, as good as a custom one), where an
 * unnamed statement is parsed and planned on every run (a third of the server's work per GPS point when points
 * come one per request). By SQL text, most recently used last; the cap keeps a stream of new texts from
 * preparing statements without end on every connection (a text pushed out runs unnamed until marked again).
 */
const names = new Map<string, string>();
const MAX_PREPARED = 64;

/**
 * Marks a compiled query to run as a named prepared statement on PostgreSQL (the embedded database runs it as
 * any other), and as used now (call it on every run). Returns the query, for `db.executeQuery(prepared(query))`. Only for statements run on their own,
 * outside a transaction: a connection that lost its prepared statement runs this one again unnamed.
 */
export function prepared<R>(query: CompiledQuery<R>): CompiledQuery<R> {
  setRecent(
    names,
    query.sql,
    names.get(query.sql) ?? `waygate_${createHash('sha256').update(query.sql).digest('hex').slice(0, 24)}`,
    MAX_PREPARED,
  );
  return query;
}

/**
 * A connection that does not keep prepared statements between two statements: a pooler in transaction mode
 * (PgBouncer before 1.21, or without max_prepared_statements; see docs/configuration.md) hands the next statement to another server
 * connection, which knows no such statement, or has one of that name from another client.
 */
const STATEMENT_LOST = new Set(['26000', '42P05']);

/**
 * The pool's client class: a query whose text was marked by `prepared` goes out as a named statement, every
 * other one as before. A connection that turns out not to keep prepared statements runs the query again
 * unnamed (nothing ran: the server refused its parse or bind) and names none from then on.
 */
export function preparingClient(Client: typeof pg.Client): typeof pg.Client {
  return class PreparingClient extends Client {
    #naming = true;

    // pg's query() has a dozen overloads; Kysely calls the (text, values) one, which is the one named here.
    override query(...args: unknown[]): never {
      const [text, values] = args;
      const query = super.query as (...a: unknown[]) => Promise<unknown>;
      const name = this.#naming && typeof text === 'string' && args.length === 2 ? names.get(text) : undefined;
      if (!name) return query.apply(this, args) as never;
      return query.call(this, { name, text, values }).catch((err: unknown) => {
        if (!STATEMENT_LOST.has((err as { code?: string } | null)?.code ?? '')) throw err;
        this.#naming = false;
        return query.apply(this, args);
      }) as never;
    }
  } as typeof pg.Client;
}
