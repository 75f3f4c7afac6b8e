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
  /** The event's created_at: with the id, its key (audit_events is partitioned by time, migration 0038). */
  audit_event_created_at: Date;
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

export interface CommunityGuildsTable {
  id: Id;
  guild_id: string;
  name: string;
  icon: string | null;
  owner_id: string | null;
  member_count: number;
  boost_count: number;
  premium_tier: number;
  bot_joined_at: Date | null;
  last_synced_at: Date | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface CommunityChannelsTable {
  id: Id;
  guild_id: string;
  channel_id: string;
  name: string;
  channel_type: number;
  parent_id: string | null;
  position: number;
  topic: string | null;
  nsfw: boolean;
}

export interface CommunityRolesTable {
  id: Id;
  guild_id: string;
  role_id: string;
  name: string;
  color: number;
  position: number;
  permissions: string;
  managed: boolean;
  mentionable: boolean;
  hoist: boolean;
}

/** The member fields the bot reports (also the staging table's, with its sync id). */
export interface CommunityMemberFields {
  user_id: string;
  username: string;
  discriminator: string | null;
  global_name: string | null;
  nickname: string | null;
  avatar: string | null;
  bot: boolean;
  system: boolean;
  joined_at: Date | null;
  premium_since: Date | null;
  deaf: boolean;
  mute: boolean;
  pending: boolean;
  communication_disabled_until: Date | null;
  roles: string[];
}

export interface CommunityMembersTable extends CommunityMemberFields {
  id: Id;
  guild_id: string;
}

export interface CommunityMemberStagingTable extends CommunityMemberFields {
  sync_id: string;
  staged_at: CreatedAt;
}

export interface CommunityBotSettingsTable {
  id: Id;
  singleton: Generated<boolean>;
  auto_sync_enabled: boolean;
  sync_interval_seconds: number;
  initial_delay_seconds: number;
  default_language: string;
  notify_on_guild_join: boolean;
  notify_on_guild_leave: boolean;
  command_cooldown_seconds: number;
  updated_at: UpdatedAt;
}

export interface CommunityGuildSettingsTable {
  guild_id: string;
  default_language: string | null;
  updated_at: UpdatedAt;
}

export interface OperationsTables {
  /** Owner: operations/community (every community_* table). */
  community_guilds: CommunityGuildsTable;
  community_channels: CommunityChannelsTable;
  community_roles: CommunityRolesTable;
  community_members: CommunityMembersTable;
  community_member_staging: CommunityMemberStagingTable;
  community_bot_settings: CommunityBotSettingsTable;
  community_guild_settings: CommunityGuildSettingsTable;
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
