import type { ColumnType, Generated } from 'kysely';
import type { AccountTables } from '../../modules/account-tables.js';
import type { TrackingTables } from '../../modules/tracking-tables.js';

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

type Id = Generated<string>;

export interface PlatformsTable {
  id: Id;
  name: string;
  slug: string;
  is_oauth: Generated<boolean>;
  enabled: Generated<boolean>;
  two_factor_supported: Generated<boolean>;
  two_factor_required: Generated<boolean>;
  registration_enabled: Generated<boolean>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface UsersTable {
  id: Id;
  username: string;
  primary_platform_account_id: string | null;
  privacy_mode: Generated<boolean>;
  avatars_enabled: Generated<boolean>;
  preferred_locale: string | null;
  last_login_at: Date | null;
  deleted_at: Date | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface PlatformAccountsTable {
  id: Id;
  user_id: string;
  platform_id: string;
  platform_user_id: string;
  username: string | null;
  email: string | null;
  avatar_url: string | null;
  password_hash: string | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface RolesTable {
  id: string;
  name: string;
  description: string | null;
  is_system: Generated<boolean>;
  is_super_admin: Generated<boolean>;
  requires_two_factor: Generated<boolean>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface PermissionsTable {
  id: Id;
  resource: string;
  action: string;
  description: string | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface ApiKeysTable {
  id: Id;
  key_hash: string;
  key_prefix: string;
  name: string;
  description: string | null;
  scopes: Generated<string[]>;
  is_active: Generated<boolean>;
  is_system: Generated<boolean>;
  user_id: string | null;
  expires_at: Date | null;
  last_used_at: Date | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface SessionsTable {
  id: Id;
  token_hash: string;
  user_id: string;
  provider: string;
  ip_address: string | null;
  user_agent: string | null;
  last_activity_at: Generated<Date>;
  expires_at: Date;
  created_at: CreatedAt;
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
  metadata: ColumnType<Record<string, unknown>, string | undefined, string>;
  status: Generated<'success' | 'failure'>;
  error_message: string | null;
  source_service: Generated<string>;
  is_reported: Generated<boolean>;
  created_at: CreatedAt;
}

export interface DevicesTable {
  id: Id;
  name: string;
  description: string | null;
  device_type: string | null;
  is_active: Generated<boolean>;
  api_key_id: string | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface GpsPointsTable {
  id: Id;
  device_id: string | null;
  trip_id: string | null;
  latitude: number;
  longitude: number;
  altitude: number | null;
  heading: number | null;
  timestamp: Date;
  speed_kmh: number;
  speed_mps: number;
  speed_mph: number;
  speed_knots: number;
  pdop: number | null;
  hdop: number | null;
  vdop: number | null;
  created_at: CreatedAt;
}

export type TripStatus = 'draft' | 'active' | 'paused' | 'completed';

export interface TripsTable {
  id: Id;
  name: string;
  description: string | null;
  status: Generated<TripStatus>;
  gps_logging_enabled: Generated<boolean>;
  device_id: string | null;
  category_id: string | null;
  origin_id: string | null;
  destination_id: string | null;
  weight_kg: number | null;
  notes: string | null;
  tags: Generated<string[]>;
  start_latitude: number | null;
  start_longitude: number | null;
  end_latitude: number | null;
  end_longitude: number | null;
  started_at: Date | null;
  ended_at: Date | null;
  /** Kept by the gps_points_count_trip trigger. */
  gps_point_count: ColumnType<number, never, never>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface TripStatusHistoryTable {
  id: Id;
  trip_id: string;
  old_status: TripStatus;
  new_status: TripStatus;
  changed_by: string | null;
  latitude: number | null;
  longitude: number | null;
  changed_at: CreatedAt;
}

/** Every table of the one PostgreSQL schema, as Kysely sees it. Modules add theirs here. */
export interface Schema extends TrackingTables, AccountTables {
  schema_migrations: SchemaMigrationsTable;
  settings: SettingsTable;
  system_config: SystemConfigTable;
  platforms: PlatformsTable;
  users: UsersTable;
  platform_accounts: PlatformAccountsTable;
  roles: RolesTable;
  permissions: PermissionsTable;
  role_permissions: { role_id: string; permission_id: string };
  user_roles: { user_id: string; role_id: string; created_at: CreatedAt };
  api_keys: ApiKeysTable;
  api_key_roles: { api_key_id: string; role_id: string };
  sessions: SessionsTable;
  audit_events: AuditEventsTable;
  devices: DevicesTable;
  gps_points: GpsPointsTable;
  trips: TripsTable;
  trip_status_history: TripStatusHistoryTable;
}
