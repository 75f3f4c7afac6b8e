import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql, type Kysely } from 'kysely';
import type { Schema } from './schema/index.js';

/** The repository's `migrations/` folder, from both `src/platform/db` and `dist/platform/db`. */
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../../migrations', import.meta.url));

// Any constant shared by every Waygate process; it names the advisory lock.
const MIGRATION_LOCK_ID = 0x57617967; // "Wayg"

interface MigrationFile {
  version: string;
  name: string;
  checksum: string;
  script: string;
}

export function readMigrations(dir = MIGRATIONS_DIR): MigrationFile[] {
  return readdirSync(dir)
    .filter((file) => /^\d{4}_[a-z0-9_]+\.sql$/.test(file))
    .sort()
    .map((file) => {
      const script = readFileSync(join(dir, file), 'utf8');
      return {
        version: file.slice(0, 4),
        name: file.slice(5, -4),
        checksum: createHash('sha256').update(script).digest('hex'),
        script,
      };
    });
}

/**
 * Applies pending migrations in one transaction under an advisory lock, so two
 * processes starting at once apply each migration exactly once and a failing
 * migration leaves nothing half-applied. Returns the versions it applied.
 */
export async function migrate(db: Kysely<Schema>, dir = MIGRATIONS_DIR): Promise<string[]> {
  const migrations = readMigrations(dir);
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${MIGRATION_LOCK_ID})`.execute(trx);
    await sql`create table if not exists schema_migrations (
      version text primary key,
      name text not null,
      checksum text not null,
      applied_at timestamptz not null default now()
    )`.execute(trx);
    const applied = new Map(
      (await trx.selectFrom('schema_migrations').select(['version', 'checksum']).execute()).map((row) => [
        row.version,
        row.checksum,
      ]),
    );
    const appliedNow: string[] = [];
    for (const migration of migrations) {
      const known = applied.get(migration.version);
      if (known !== undefined) {
        if (known !== migration.checksum) {
          throw new Error(`Migration ${migration.version}_${migration.name} was changed after it was applied`);
        }
        continue;
      }
      await sql.raw(migration.script).execute(trx);
      await trx
        .insertInto('schema_migrations')
        .values({ version: migration.version, name: migration.name, checksum: migration.checksum })
        .execute();
      appliedNow.push(migration.version);
    }
    return appliedNow;
  });
}
