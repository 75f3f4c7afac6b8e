import type { CreatedAt } from '../platform/db/schema.js';
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
}

export type AccountTokenPurpose = 'password_reset' | 'email_change' | 'email_link';
