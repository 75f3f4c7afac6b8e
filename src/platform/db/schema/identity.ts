import type { ColumnType, Generated } from 'kysely';
import type { CreatedAt, Id, UpdatedAt } from './columns.js';

export type AccountTokenPurpose = 'password_reset' | 'email_change' | 'email_link';

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

export interface UserBansTable {
  id: Id;
  user_id: string;
  reason: string | null;
  banned_by: string | null;
  /** Written from the service's clock, so a ban's end is computed on the same time line. */
  banned_at: ColumnType<Date, Date, never>;
  /** null: permanent. */
  expires_at: Date | null;
  unbanned_at: Date | null;
  unbanned_by: string | null;
}

export type OAuthClientType = 'confidential' | 'public';

export interface OAuthClientsTable {
  id: Id;
  name: string;
  description: string | null;
  logo_url: string | null;
  homepage_url: string | null;
  privacy_policy_url: string | null;
  terms_of_service_url: string | null;
  redirect_uris: string[];
  allowed_scopes: Generated<string[]>;
  client_type: OAuthClientType;
  /** SHA-256 of the secret (confidential clients); null for public clients. */
  secret_hash: string | null;
  is_active: Generated<boolean>;
  is_first_party: Generated<boolean>;
  owner_user_id: string | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export type IntegrationBotStatus = 'active' | 'paused' | 'disabled';

export interface IntegrationsTable {
  id: Id;
  user_id: string;
  platform_slug: string;
  platform_user_id: string;
  username: string;
  display_name: string;
  profile_image_url: string | null;
  scopes: Generated<string[]>;
  /** false once the platform refused the refresh token: the user has to connect again. */
  is_active: Generated<boolean>;
  bot_status: Generated<IntegrationBotStatus>;
  /** Sealed with the secret box; never the plain token. */
  access_token_sealed: string;
  refresh_token_sealed: string | null;
  token_expires_at: Date | null;
  /** Written from the service's clock (token expiry is computed on the same time line). */
  connected_at: Date;
  last_refreshed_at: Date | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export type GroupInvitationStatus = 'pending' | 'accepted' | 'declined' | 'expired';

export interface GroupsTable {
  id: Id;
  name: string;
  description: string | null;
  created_by: string | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface GroupMembersTable {
  group_id: string;
  user_id: string;
  is_admin: Generated<boolean>;
  /** Written from the service's clock: the longest-standing member takes over from a purged last admin. */
  joined_at: Date;
}

export interface GroupInvitationsTable {
  id: Id;
  group_id: string;
  invited_by: string | null;
  /** The invited user: by username, or by the address of a registered user (or who registered with it). */
  user_id: string | null;
  /** The address invited, normalised; null for an invitation by username. */
  email: string | null;
  /** Written from the service's clock, as expires_at (14 days later). */
  created_at: Date;
  expires_at: Date;
  answered_at: Date | null;
  /** 'pending' past expires_at counts as expired; it is written as 'expired' when next looked at. */
  status: Generated<GroupInvitationStatus>;
}

export interface IdentityTables {
  /** Owner: identity/integrations. */
  integrations: IntegrationsTable;
  /** Owner: identity/login-providers. */
  platforms: PlatformsTable;
  /** Owner: identity/users. */
  users: UsersTable;
  /** Owner: identity/users (a user's sign-in accounts; users/accounts.ts serves them through the users service). */
  platform_accounts: PlatformAccountsTable;
  /** Owner: identity/access (roles, permissions and who holds them). */
  roles: RolesTable;
  permissions: PermissionsTable;
  role_permissions: { role_id: string; permission_id: string };
  user_roles: { user_id: string; role_id: string; created_at: CreatedAt };
  /** Owner: identity/api-keys. */
  api_keys: ApiKeysTable;
  /** Owner: identity/access (which roles a key holds). */
  api_key_roles: { api_key_id: string; role_id: string };
  /** Owner: identity/sessions. */
  sessions: SessionsTable;
  /** Owner: identity/bans. */
  user_bans: UserBansTable;
  /** Owner: identity/security-notices (browsers and networks a user signed in from, hashed). */
  sign_in_devices: { user_id: string; fingerprint: string; first_seen_at: Date; last_seen_at: Date };
  security_notice_settings: {
    user_id: string;
    new_sign_in: Generated<boolean>;
    new_api_key: Generated<boolean>;
    updated_at: UpdatedAt;
  };
  /** Owner: identity/preferences (units, time zone and coordinate format; no row: the defaults). */
  user_preferences: {
    user_id: string;
    speed_unit: Generated<'kmh' | 'mph' | 'knots'>;
    distance_unit: Generated<'km' | 'mi' | 'nmi'>;
    time_zone: string | null;
    coordinate_format: Generated<'decimal' | 'dm' | 'dms'>;
    updated_at: UpdatedAt;
  };
  /** Owner: identity/oauth-clients. */
  oauth_clients: OAuthClientsTable;
  /** Owner: identity/oauth (the provider's state, as oidc-provider stores it). */
  oauth_artifacts: {
    model: string;
    id: string;
    payload: ColumnType<Record<string, unknown>, string, string>;
    grant_id: string | null;
    uid: string | null;
    user_code: string | null;
    expires_at: Date | null;
    consumed_at: Date | null;
    account_id: string | null;
    client_id: string | null;
  };
  /** Owner: identity/oauth. */
  oauth_consents: {
    user_id: string;
    client_id: string;
    scopes: string[];
    granted_at: CreatedAt;
    updated_at: UpdatedAt;
  };
  oauth_signing_keys: {
    kid: string;
    algorithm: string;
    private_jwk_sealed: string;
    created_at: CreatedAt;
    retired_at: Date | null;
  };

  /** Owner: identity/registration. */
  pending_registrations: {
    id: Generated<string>;
    email: string;
    username: string;
    password_hash: string;
    token_hash: string;
    expires_at: Date;
    created_at: CreatedAt;
  };
  /** Owner: identity/account-tokens. */
  account_tokens: {
    id: Generated<string>;
    purpose: AccountTokenPurpose;
    token_hash: string;
    user_id: string;
    email: string | null;
    password_hash: string | null;
    expires_at: Date;
    used_at: Date | null;
    created_at: CreatedAt;
  };
  /** Owner: identity/passkeys. */
  passkeys: {
    id: Id;
    user_id: string;
    credential_id: string;
    public_key: string;
    /** bigint: the driver may read it as a string. */
    counter: ColumnType<string | number, number | undefined, number>;
    transports: ColumnType<string[], string[] | undefined, string[]>;
    device_type: string;
    backed_up: boolean;
    user_verified: boolean;
    name: string;
    created_at: CreatedAt;
    last_used_at: Date | null;
  };
  /** Owner: identity/groups (with its members and invitations below). */
  groups: GroupsTable;
  group_members: GroupMembersTable;
  group_invitations: GroupInvitationsTable;
  /** Owner: identity/two-factor (with the backup codes and challenges below). */
  user_two_factor: {
    user_id: string;
    platform_id: string;
    /** Sealed with the secret box; never the plain base32 secret. */
    secret_sealed: string | null;
    enabled_at: Date | null;
    pending_secret_sealed: string | null;
    pending_expires_at: Date | null;
    /** RFC 6238 time step of the last accepted TOTP code (replay protection). */
    last_used_step: number | null;
    created_at: CreatedAt;
    updated_at: UpdatedAt;
  };
  two_factor_backup_codes: {
    id: Generated<string>;
    user_id: string;
    code_hash: string;
    used_at: Date | null;
    created_at: CreatedAt;
  };
  two_factor_challenges: {
    id: Generated<string>;
    token_hash: string;
    user_id: string;
    provider: string;
    attempts: Generated<number>;
    expires_at: Date;
    consumed_at: Date | null;
    created_at: CreatedAt;
  };
}
