import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openTestDatabase, usesPostgres } from '../../../test/helpers.js';
import { openDatabase, type Database } from './database.js';
import { migrate, MIGRATIONS_DIR, readMigrations } from './migrate.js';

const tempDirs: string[] = [];
afterAll(() => tempDirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** The repository's migrations plus extra files, in a temporary folder. */
function migrationsWith(extra: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'waygate-migrations-'));
  tempDirs.push(dir);
  cpSync(MIGRATIONS_DIR, dir, { recursive: true });
  for (const [file, script] of Object.entries(extra)) writeFileSync(join(dir, file), script);
  return dir;
}

async function appliedVersions(database: Database): Promise<string[]> {
  const rows = await database.db.selectFrom('schema_migrations').select('version').orderBy('version').execute();
  return rows.map((row) => row.version);
}

async function tableExists(database: Database, name: string): Promise<boolean> {
  const { rows } = await sql<{ exists: boolean }>`select to_regclass(${name}) is not null as exists`.execute(
    database.db,
  );
  return rows[0]!.exists;
}

describe(`migrations (${usesPostgres ? 'postgres' : 'embedded'})`, () => {
  let database: Database;
  beforeEach(async () => {
    database = await openTestDatabase();
  });
  afterEach(() => database.close());

  it('records every repository migration, and a second run applies nothing', async () => {
    expect(await appliedVersions(database)).toEqual(readMigrations().map((m) => m.version));
    expect(await migrate(database.db)).toEqual([]);
  });

  it('applies a new migration once, even when two runs start at the same time', async () => {
    const dir = migrationsWith({
      '0900_extra.sql': 'create table extra (id int primary key);\ninsert into extra values (1);',
    });
    const results = await Promise.all([migrate(database.db, dir), migrate(database.db, dir)]);
    expect(results.flat()).toEqual(['0900']);
    const { rows } = await sql<{ n: number }>`select count(*) as n from extra`.execute(database.db);
    expect(rows[0]!.n).toBe(1);
  });

  it('leaves nothing behind when a migration fails', async () => {
    const dir = migrationsWith({
      '0900_good.sql': 'create table good_one (id int);',
      '0901_bad.sql': 'create table bad_one (id int);\nselect * from no_such_table;',
    });
    await expect(migrate(database.db, dir)).rejects.toThrow(/no_such_table/);
    expect(await tableExists(database, 'good_one')).toBe(false);
    expect(await tableExists(database, 'bad_one')).toBe(false);
    expect(await appliedVersions(database)).toEqual(readMigrations().map((m) => m.version));
  });

  it('refuses to run when an applied migration was edited', async () => {
    const [first] = readMigrations();
    const dir = migrationsWith({ [`${first!.version}_${first!.name}.sql`]: `${first!.script}\n-- edited` });
    await expect(migrate(database.db, dir)).rejects.toThrow(`Migration ${first!.version}_${first!.name} was changed`);
  });

  it('returns counts and numerics as numbers on every back end', async () => {
    const { rows } = await sql<{ n: number; x: number }>`select count(*) as n, 1.5::numeric as x`.execute(database.db);
    expect(rows[0]).toEqual({ n: 1, x: 1.5 });
  });
});

describe.runIf(!usesPostgres)('embedded database on disk', () => {
  it('keeps its data across a restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'waygate-pgdata-'));
    tempDirs.push(dataDir);
    const first = await openDatabase({ kind: 'embedded', dataDir });
    await migrate(first.db);
    await first.db
      .insertInto('settings')
      .values({ key: 'kept', value: JSON.stringify({ a: 1 }) })
      .execute();
    await first.close();

    const second = await openDatabase({ kind: 'embedded', dataDir });
    expect(await migrate(second.db)).toEqual([]);
    const row = await second.db.selectFrom('settings').select(['key', 'value']).executeTakeFirst();
    expect(row).toEqual({ key: 'kept', value: { a: 1 } });
    await second.close();
  });
});
