import type { Generated } from 'kysely';

/** Tables of the platform itself: the migration log (platform/db), the secret key's check (platform/secret-box). */

export interface SchemaMigrationsTable {
  version: string;
  name: string;
  checksum: string;
  applied_at: Generated<Date>;
}

export interface SecretKeyCheckTable {
  id: Generated<number>;
  sealed: string;
  created_at: Generated<Date>;
}

export interface PlatformTables {
  /** Owner: platform/db (migrations). */
  schema_migrations: SchemaMigrationsTable;
  /** Owner: platform/secret-box (one row: a value sealed with the key in use). */
  secret_key_check: SecretKeyCheckTable;
}
