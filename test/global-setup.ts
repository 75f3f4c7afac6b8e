import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../src/platform/db/database.js';
import { migrate } from '../src/platform/db/migrate.js';
import { withDatabaseName } from './database-url.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Embedded: path of a migrated PGlite data directory dump that each test file loads. */
    pgliteTemplate: string;
    /** External: a migrated PostgreSQL database that each test file clones. */
    postgresTemplate: string;
  }
}

/**
 * Pays the cost of creating and migrating a database once per run: a fresh
 * PGlite takes seconds to initialise, a clone of the migrated one (or a
 * PostgreSQL `create database … template`) is cheap.
 */
export default async function setup(project: TestProject) {
  const backend = project.config.env?.WAYGATE_TEST_BACKEND;
  if ((backend === 'external' || backend === 'two-nodes') && process.env.TEST_DATABASE_URL) return setupPostgres(project, process.env.TEST_DATABASE_URL);
  return setupPglite(project);
}

async function setupPglite(project: TestProject) {
  const dir = mkdtempSync(join(tmpdir(), 'waygate-test-'));
  const database = await openDatabase({ kind: 'embedded' });
  await migrate(database.db);
  const dump = await database.dump!();
  const path = join(dir, 'template.tar');
  writeFileSync(path, Buffer.from(await dump.arrayBuffer()));
  await database.close();
  project.provide('pgliteTemplate', path);
  return () => rmSync(dir, { recursive: true, force: true });
}

async function setupPostgres(project: TestProject, url: string) {
  const template = `waygate_tmpl_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`create database ${template}`);
  const database = await openDatabase({ kind: 'postgres', url: withDatabaseName(url, template), poolSize: 1 });
  await migrate(database.db);
  await database.close();
  project.provide('postgresTemplate', template);
  return async () => {
    const clones = await admin.query<{ datname: string }>(
      `select datname from pg_database where datname like $1 || '%'`,
      [template],
    );
    // Clones the test files did not drop themselves first, the template last.
    const names = clones.rows.map((row) => row.datname).sort().reverse();
    for (const name of names) await admin.query(`drop database if exists "${name}" with (force)`);
    await admin.end();
  };
}
