import type { Generated } from 'kysely';
import type { CreatedAt, Id, UpdatedAt } from './columns.js';

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

export interface IntegrationTables {
  /** Owner: identity/integrations. */
  integrations: IntegrationsTable;
}
