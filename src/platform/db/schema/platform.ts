import type { Generated } from 'kysely';
import type { Json } from './columns.js';

/**
 * Tables of the platform itself: the migration log (platform/db), the secret key's check (platform/secret-box), the scheduled
 * jobs (platform/scheduler), the durable keys (platform/kv).
 */

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

export interface ScheduledJobsTable {
  name: string;
  next_run_at: Date;
  locked_until: Date | null;
  locked_by: string | null;
  last_started_at: Date | null;
  last_finished_at: Date | null;
  last_duration_ms: number | null;
  last_outcome: 'succeeded' | 'failed' | null;
  last_result: Json | null;
  last_error: string | null;
  runs: Generated<number>;
  failures: Generated<number>;
}

export interface KvDurableTable {
  key: string;
  value: string;
  expires_at: Date | null;
}

export interface PlatformTables {
  /** Owner: platform/db (migrations). */
  schema_migrations: SchemaMigrationsTable;
  /** Owner: platform/secret-box (one row: a value sealed with the key in use). */
  secret_key_check: SecretKeyCheckTable;
  /** Owner: platform/scheduler (one row per job: who holds it, when it is due, how its last run went). */
  scheduled_jobs: ScheduledJobsTable;
  /** Owner: platform/kv (keys that must outlive a restart when there is no Redis: sign-in locks, replay markers). */
  kv_durable: KvDurableTable;
}
