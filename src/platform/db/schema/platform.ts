import type { Generated } from 'kysely';
import type { CreatedAt, Id, JsonObject } from './columns.js';

/** Tables of the platform itself: the migration log (platform/db) and the audit trail (platform/audit). */

export interface SchemaMigrationsTable {
  version: string;
  name: string;
  checksum: string;
  applied_at: Generated<Date>;
}

export interface AuditEventsTable {
  id: Id;
  user_id: string | null;
  event_type: string;
  resource_type: string | null;
  resource_id: string | null;
  actor_id: string | null;
  ip_address: string | null;
  user_agent: string | null;
  description: string | null;
  metadata: JsonObject;
  status: Generated<'success' | 'failure'>;
  error_message: string | null;
  source_service: Generated<string>;
  is_reported: Generated<boolean>;
  created_at: CreatedAt;
}

export interface PlatformTables {
  /** Owner: platform/db (migrations). */
  schema_migrations: SchemaMigrationsTable;
  /** Owner: platform/audit (the audit writer). */
  audit_events: AuditEventsTable;
}
