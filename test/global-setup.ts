import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
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
  if ((backend === 'external' || backend === 'two-nodes') && process.env.TEST_DATABASE_URL)
    return setupPostgres(project, process.env.TEST_DATABASE_URL);
  return setupPglite(project);
}

/** Where migrated PGlite templates are kept between runs (node_modules is never committed, and CI starts without it). */
const TEMPLATE_CACHE = join(process.cwd(), 'node_modules', '.cache', 'waygate-test');

const STALE_TEMPLATE_MS = 3_600_000;

/** A name for the migrated database: the migrations and the PGlite version, hashed (either changes it). */
function templateKey(): string {
  const hash = createHash('sha256');
  const migrations = join(process.cwd(), 'migrations');
  for (const name of readdirSync(migrations).sort()) hash.update(name).update(readFileSync(join(migrations, name)));
  hash.update(
    JSON.parse(readFileSync(join(process.cwd(), 'node_modules', '@electric-sql', 'pglite', 'package.json'), 'utf8'))
      .version,
  );
  return hash.digest('hex').slice(0, 16);
}

/**
 * The migrated PGlite dump the test files load, made once per set of migrations: a run of one test file on an
 * unchanged tree skips creating and migrating a database (seconds). Written beside its final name and renamed,
 * so two runs at once never read half a file. Other templates are removed once an hour old: a run started before
 * a migration was added may still be loading its own.
 */
async function setupPglite(project: TestProject) {
  const path = join(TEMPLATE_CACHE, `pglite-${templateKey()}.tar`);
  if (!existsSync(path)) {
    mkdirSync(TEMPLATE_CACHE, { recursive: true });
    const database = await openDatabase({ kind: 'embedded' });
    await migrate(database.db);
    const dump = await database.dump!();
    await database.close();
    const partial = `${path}.${process.pid}.partial`;
    writeFileSync(partial, Buffer.from(await dump.arrayBuffer()));
    renameSync(partial, path);
    for (const name of readdirSync(TEMPLATE_CACHE)) {
      const other = join(TEMPLATE_CACHE, name);
      if (!name.startsWith('pglite-') || other === path || name.endsWith('.partial')) continue;
      if (Date.now() - statSync(other).mtimeMs > STALE_TEMPLATE_MS) rmSync(other, { force: true });
    }
  }
  project.provide('pgliteTemplate', path);
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
    const names = clones.rows
      .map((row) => row.datname)
      .sort()
      .reverse();
    for (const name of names) await admin.query(`drop database if exists "${name}" with (force)`);
    await admin.end();
  };
}
