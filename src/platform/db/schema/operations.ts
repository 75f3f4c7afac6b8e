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

export type NotificationChannelType = 'email' | 'webhook' | 'ntfy' | 'gotify' | 'telegram' | 'web_push';

export interface NotificationChannelsTable {
  id: Id;
  user_id: string;
  type: NotificationChannelType;
  name: string;
  /** The settings that are not secret. */
  config: JsonObject;
  /** The secrets, one JSON object sealed with SECRET_KEY. */
  secrets_sealed: string | null;
  enabled: Generated<boolean>;
  last_status: number | null;
  last_error: string | null;
  last_success_at: Date | null;
  last_failure_at: Date | null;
  failures_in_row: Generated<number>;
  failing: Generated<boolean>;
  failing_notified_at: Date | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface NotificationRulesTable {
  id: Id;
  user_id: string;
  name: string;
  event_types: ColumnType<string[], string, string>;
  device_ids: ColumnType<string[] | null, string | null, string | null>;
  geofence_ids: ColumnType<string[] | null, string | null, string | null>;
  channel_ids: ColumnType<string[], string, string>;
  quiet_from: string | null;
  quiet_to: string | null;
  enabled: Generated<boolean>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface NotificationVapidKeysTable {
  id: Generated<boolean>;
  public_key: string;
  private_key_sealed: string;
  created_at: CreatedAt;
}

export type NotificationDeliveryStatus = 'pending' | 'sending' | 'sent' | 'failed' | 'gone';

export interface NotificationDeliveriesTable {
  id: Id;
  event_id: string;
  channel_id: string;
  rule_id: string | null;
  user_id: string;
  /** The event as stored, for the notification's texts. */
  payload: JsonObject;
  status: Generated<NotificationDeliveryStatus>;
  attempts: Generated<number>;
  /** When it is due; while sending, when its lease ends. */
  next_attempt_at: Date;
  give_up_at: Date;
  last_status: number | null;
  last_error: string | null;
  sent_at: Date | null;
  created_at: CreatedAt;
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
  /** Owner: operations/notifications. */
  notification_channels: NotificationChannelsTable;
  /** Owner: operations/notifications. */
  notification_rules: NotificationRulesTable;
  /** Owner: operations/notifications. */
  notification_vapid_keys: NotificationVapidKeysTable;
  /** Owner: operations/notifications (the outbox). */
  notification_deliveries: NotificationDeliveriesTable;
}
