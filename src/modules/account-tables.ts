import type { CreatedAt, UpdatedAt } from '../platform/db/schema.js';
import type { Generated } from 'kysely';

/** Tables of the accounts area (registration, account tokens, two-factor), as Kysely sees them. */
export interface AccountTables {
  pending_registrations: {
    id: Generated<string>;
    email: string;
    username: string;
    password_hash: string;
    token_hash: string;
    expires_at: Date;
    created_at: CreatedAt;
  };
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

export type AccountTokenPurpose = 'password_reset' | 'email_change' | 'email_link';
