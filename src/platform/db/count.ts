import { CompiledQuery, sql, type Compilable, type Kysely, type SelectQueryBuilder } from 'kysely';

/**
 * Totals of lists. Counting every matching row would read millions of rows for every page of a large
 * table, so a total is exact up to COUNT_EXACT_UP_TO and PostgreSQL's estimate beyond; the response
 * then says so in `X-Total-Count-Estimated` (`sayIfEstimated` in platform/http/envelopes.ts).
 */

/** Totals up to this many rows are counted; larger ones are estimated. */
export const COUNT_EXACT_UP_TO = 10_000;

/** A list's total, and whether it is PostgreSQL's estimate rather than a count. */
export interface Total {
  total: number;
  estimated: boolean;
}

/** How many rows the planner expects `query` to return (from its statistics; no rows are read). */
export async function plannedRows<DB>(db: Kysely<DB>, query: Compilable): Promise<number> {
  const { sql: text, parameters } = query.compile();
  const { rows } = await db.executeQuery<{ 'QUERY PLAN': [{ Plan: { 'Plan Rows': number } }] }>(
    CompiledQuery.raw(`explain (format json) ${text}`, [...parameters]),
  );
  return Math.round(rows[0]!['QUERY PLAN'][0].Plan['Plan Rows']);
}

/**
 * How many rows `matching` selects: exact up to COUNT_EXACT_UP_TO (at most one more row is read, along
 * the query's index), beyond that the planner's estimate for the same query, never below the rows counted.
 */
export async function cappedCount<DB, TB extends keyof DB, O>(
  db: Kysely<DB>,
  matching: SelectQueryBuilder<DB, TB, O>,
): Promise<Total> {
  const capped = matching.limit(COUNT_EXACT_UP_TO + 1);
  const { rows } = await sql<{ n: string }>`select count(*) as n from (${capped}) as capped`.execute(db);
  const exact = Number(rows[0]!.n);
  if (exact <= COUNT_EXACT_UP_TO) return { total: exact, estimated: false };
  return { total: Math.max(await plannedRows(db, matching), exact), estimated: true };
}

/**
 * The rows of a whole table, `everyRow` selecting them all without a condition. When the planner's
 * estimate (its statistics scaled to the table's current size: one plan, no rows read) is beyond twice
 * COUNT_EXACT_UP_TO, that estimate; otherwise `cappedCount`. So the total is exact up to
 * COUNT_EXACT_UP_TO unless the statistics are off by more than half (a mass delete autovacuum has not
 * seen yet), and an estimate is always marked as one.
 */
export async function tableCount<DB, TB extends keyof DB, O>(
  db: Kysely<DB>,
  everyRow: SelectQueryBuilder<DB, TB, O>,
): Promise<Total> {
  const planned = await plannedRows(db, everyRow);
  if (planned > 2 * COUNT_EXACT_UP_TO) return { total: planned, estimated: true };
  return cappedCount(db, everyRow);
}
