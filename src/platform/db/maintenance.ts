import { sql, type Kysely } from 'kysely';
import type { Schema } from './schema/index.js';

/**
 * What autovacuum does on a PostgreSQL server, for the embedded database: PGlite runs PostgreSQL in
 * single-user mode, which starts no background workers, so without this no table is ever analysed (the
 * planner guesses, and a large device's export scans and sorts every later point per page) and dead rows of
 * updated tables (sessions, trips' point counts, jobs) are never reclaimed. Run as a scheduled job.
 *
 * Autovacuum's own default thresholds decide, from the statistics counters PGlite does keep: a table is
 * vacuumed once its dead rows pass 50 + 20 % of its rows, analysed once the rows changed since its last
 * analysis pass 50 + 10 %. Each statement holds the one connection only as long as its table takes.
 */
export async function maintainEmbeddedDatabase(
  db: Kysely<Schema>,
): Promise<{ vacuumed: string[]; analyzed: string[] }> {
  // The counters of the last second's statements are still this backend's own until its next flush.
  await sql`select pg_stat_force_next_flush()`.execute(db);
  const { rows } = await sql<{ schema: string; table: string; vacuum: boolean; analyze: boolean }>`
    select schemaname as schema, relname as table,
           n_dead_tup > 50 + 0.2 * n_live_tup as vacuum,
           n_mod_since_analyze > 50 + 0.1 * n_live_tup as analyze
      from pg_stat_user_tables
     where n_dead_tup > 50 + 0.2 * n_live_tup or n_mod_since_analyze > 50 + 0.1 * n_live_tup
     order by relname`.execute(db);
  const vacuumed: string[] = [];
  const analyzed: string[] = [];
  for (const row of rows) {
    const table = sql.id(row.schema, row.table);
    if (row.vacuum) {
      await sql`vacuum (analyze) ${table}`.execute(db);
      vacuumed.push(row.table);
      analyzed.push(row.table);
    } else {
      await sql`analyze ${table}`.execute(db);
      analyzed.push(row.table);
    }
  }
  return { vacuumed, analyzed };
}
