import type { ColumnType, Generated } from 'kysely';
import type { CreatedAt, Id, Json, JsonObject, UpdatedAt } from './columns.js';

export type AuditStatus = 'success' | 'failure';
export type AuditReportReason = 'not_me' | 'suspicious' | 'unknown_device' | 'unknown_location' | 'other';
export type AuditReportStatus = 'pending' | 'reviewed' | 'resolved' | 'dismissed';

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

export interface AuditEventsTable {
  id: Id;
  /** Text, not a foreign key: bots record external ids, and events outlive users. */
  user_id: string | null;
  event_type: string;
  resource_type: string | null;
  resource_id: string | null;
  actor_id: string | null;
  ip_address: string | null;
  user_agent: string | null;
  description: string | null;
  metadata: JsonObject;
  status: Generated<AuditStatus>;
  error_message: string | null;
  source_service: Generated<string>;
  country_code: string | null;
  country_name: string | null;
  city: string | null;
  region: string | null;
  created_at: CreatedAt;
}

export interface AuditReportsTable {
  id: Id;
  audit_event_id: string;
  user_id: string;
  reason: AuditReportReason;
  description: string | null;
  status: Generated<AuditReportStatus>;
  reviewed_by: string | null;
  reviewed_at: Date | null;
  resolution_notes: string | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface ExportLogsTable {
  id: Id;
  user_id: string;
  exported_at: Date;
  ip_address: string | null;
  user_agent: string | null;
  export_format: Generated<string>;
  /** int8, read as a number (see database.ts). */
  file_size_bytes: ColumnType<number, number, never>;
  locale: string;
  created_at: CreatedAt;
}

export interface OperationsTables {
  /** Owner: operations/audit (the audit writer is the only code that inserts events). */
  audit_events: AuditEventsTable;
  /** Owner: operations/audit. */
  audit_reports: AuditReportsTable;
  /** Owner: operations/export. */
  export_logs: ExportLogsTable;
  /** Owner: operations/settings. */
  settings: SettingsTable;
  /** Owner: operations/settings. */
  system_config: SystemConfigTable;
}
