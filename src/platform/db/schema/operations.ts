import type { Generated } from 'kysely';
import type { CreatedAt, Json, UpdatedAt } from './columns.js';

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

export interface OperationsTables {
  /** Owner: operations/settings. */
  settings: SettingsTable;
  /** Owner: operations/settings. */
  system_config: SystemConfigTable;
}
