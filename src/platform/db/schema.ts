import type { ColumnType, Generated } from 'kysely';

/** Timestamp columns: read as Date, written as Date or ISO string, defaulted by the database. */
export type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
export type UpdatedAt = ColumnType<Date, Date | string | undefined, Date | string>;
export type Json = ColumnType<unknown, string, string>;

export interface SchemaMigrationsTable {
  version: string;
  name: string;
  checksum: string;
  applied_at: Generated<Date>;
}

export interface SettingsTable {
  key: string;
  value: Json;
  description: string | null;
  is_public: Generated<boolean>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface SystemConfigTable {
  key: string;
  value: Json;
  description: string | null;
  updated_at: UpdatedAt;
}

/** Every table of the one PostgreSQL schema, as Kysely sees it. Modules add theirs here. */
export interface Schema {
  schema_migrations: SchemaMigrationsTable;
  settings: SettingsTable;
  system_config: SystemConfigTable;
}
