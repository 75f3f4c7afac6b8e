import type { Generated } from 'kysely';

/** Tables of the platform itself: the migration log (platform/db). */

export interface SchemaMigrationsTable {
  version: string;
  name: string;
  checksum: string;
  applied_at: Generated<Date>;
}

export interface PlatformTables {
  /** Owner: platform/db (migrations). */
  schema_migrations: SchemaMigrationsTable;
}
