import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { openDatabase, type Database } from '../src/platform/db/database.js';
import { migrate, MIGRATIONS_DIR } from '../src/platform/db/migrate.js';
import { withDatabaseName } from './database-url.js';
import { usesPostgres } from './helpers.js';

async function onServer(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

export interface Migrating {
  database: Database;
  migrateIt: () => Promise<string[]>;
  close: () => Promise<void>;
}

/**
 * A new database on this run's back end (not the test template, which is migrated already), migrated up to
 * the migration `version` and not including it, for a test to fill as the old schema had it; `migrateIt()`
 * then applies that one migration alone and answers the versions applied.
 */
export async function databaseBefore(version: string): Promise<Migrating> {
  const dir = mkdtempSync(join(tmpdir(), 'waygate-migrations-'));
  let name: string | undefined;
  let database: Database;
  if (usesPostgres) {
    name = `waygate_mig${version}_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
    await onServer(`create database ${name}`);
    database = await openDatabase({
      kind: 'postgres',
      url: withDatabaseName(process.env.TEST_DATABASE_URL!, name),
      poolSize: 1,
    });
  } else {
    database = await openDatabase({ kind: 'embedded' });
  }
  for (const file of readdirSync(MIGRATIONS_DIR).filter((entry) => entry < version))
    cpSync(join(MIGRATIONS_DIR, file), join(dir, file));
  await migrate(database.db, dir);
  return {
    database,
    migrateIt: async () => {
      const file = readdirSync(MIGRATIONS_DIR).find((entry) => entry.startsWith(version))!;
      cpSync(join(MIGRATIONS_DIR, file), join(dir, file));
      return migrate(database.db, dir);
    },
    close: async () => {
      await database.close();
      if (name) await onServer(`drop database if exists ${name} with (force)`);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
