import { CompiledQuery, Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { usesPostgres } from '../../../test/helpers.js';
import { prepared, preparingClient } from './prepared.js';

// The session's prepared statements are visible only on its own connection: one pool of one connection.
describe.runIf(usesPostgres)('prepared statements (postgres)', () => {
  async function withOneConnection(run: (db: Kysely<unknown>) => Promise<void>): Promise<void> {
    const pool = new pg.Pool({
      Client: preparingClient(pg.Client),
      connectionString: process.env.TEST_DATABASE_URL,
      max: 1,
    });
    const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool }) });
    try {
      await run(db);
    } finally {
      await db.destroy();
    }
  }
  const preparedOnConnection = async (db: Kysely<unknown>) =>
    (await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(db)).rows.map(
      (row) => row.statement,
    );

  it('runs a marked query as a named statement, parsed once for every run', async () => {
    await withOneConnection(async (db) => {
      const text = `select $1::int + 1 as next -- ${Math.random()}`;
      for (const n of [1, 2, 3]) {
        const { rows } = await db.executeQuery<{ next: number }>(prepared(CompiledQuery.raw(text, [n])));
        expect(rows).toEqual([{ next: n + 1 }]);
      }
      expect((await preparedOnConnection(db)).filter((statement) => statement === text)).toHaveLength(1);
    });
  });

  it('runs a marked query again unnamed on a connection that lost its prepared statements, as behind a pooler in transaction mode', async () => {
    await withOneConnection(async (db) => {
      const text = `select $1::int * 2 as double -- ${Math.random()}`;
      expect((await db.executeQuery<{ double: number }>(prepared(CompiledQuery.raw(text, [2])))).rows).toEqual([
        { double: 4 },
      ]);
      // The driver still takes the statement for prepared; the server no longer has it.
      await sql`deallocate all`.execute(db);
      expect((await db.executeQuery<{ double: number }>(prepared(CompiledQuery.raw(text, [3])))).rows).toEqual([
        { double: 6 },
      ]);
      expect((await db.executeQuery<{ double: number }>(prepared(CompiledQuery.raw(text, [4])))).rows).toEqual([
        { double: 8 },
      ]);
      expect(await preparedOnConnection(db)).not.toContain(text);
    });
  });

  it('leaves every other query unnamed', async () => {
    await withOneConnection(async (db) => {
      const text = `select $1::int as n -- ${Math.random()}`;
      expect((await db.executeQuery<{ n: number }>(CompiledQuery.raw(text, [7]))).rows).toEqual([{ n: 7 }]);
      expect(await preparedOnConnection(db)).not.toContain(text);
    });
  });
});
