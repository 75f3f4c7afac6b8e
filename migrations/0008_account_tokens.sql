-- Accounts: registrations waiting for their email to be confirmed, and the single-use
-- tokens mailed for password resets, email changes and email links. Only SHA-256
-- hashes of the tokens are stored.

create table pending_registrations (
  id uuid primary key default gen_random_uuid(),
  -- Lower case; a row whose expires_at has passed no longer reserves the address or name.
  email text not null unique,
  username text not null unique,
  password_hash text not null,
  token_hash text not null unique,
  expires_at timestamptz not null,
  created_at timestamptz not null default now()
);

create table account_tokens (
  id uuid primary key default gen_random_uuid(),
  purpose text not null check (purpose in ('password_reset', 'email_change', 'email_link')),
  token_hash text not null unique,
  user_id uuid not null references users (id) on delete cascade,
  -- email_change: the new address; email_link: the address of the account to link.
  email text,
  -- email_link: the password of the email account that verification creates.
  password_hash text,
  expires_at timestamptz not null,
  used_at timestamptz,
  created_at timestamptz not null default now()
);
create index account_tokens_user on account_tokens (user_id, purpose);
