import type { IdentityTables } from './identity.js';
import type { OperationsTables } from './operations.js';
import type { PlatformTables } from './platform.js';
import type { TrackingTables } from './tracking.js';

/**
 * Every table of the one PostgreSQL schema, as Kysely sees it. The types live here, in a folder that
 * imports nothing but Kysely, so the platform can type its database without knowing any module; each
 * table's owning module (the only one that reads or writes it) is named beside it.
 */
export interface Schema extends PlatformTables, OperationsTables, IdentityTables, TrackingTables {}

export type { CreatedAt, UpdatedAt, Json } from './columns.js';
export type {
  AccountTokenPurpose,
  GroupInvitationStatus,
  IntegrationBotStatus,
  IntegrationsTable,
  OAuthClientsTable,
  OAuthClientType,
  UsersTable,
} from './identity.js';
export type { DeviceIcon, TripStatus } from './tracking.js';
export type { AuditReportReason, AuditReportStatus, AuditStatus } from './operations.js';
