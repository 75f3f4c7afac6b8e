-- OAuth client applications. A confidential client's secret is a 256-bit random value, stored only as
-- its SHA-256 hash (a slow hash adds nothing against guessing 256 bits); a public client has none and
-- must use PKCE. Deleting the owner deletes their clients.
create table oauth_clients (
  id uuid primary key default gen_random_uuid(),
  name text not null,
  description text,
  logo_url text,
  homepage_url text,
  privacy_policy_url text,
  terms_of_service_url text,
  redirect_uris text[] not null,
  allowed_scopes text[] not null default '{openid,profile,email}',
  client_type text not null default 'confidential' check (client_type in ('confidential', 'public')),
  secret_hash text,
  is_active boolean not null default true,
  is_first_party boolean not null default false,
  owner_user_id uuid references users (id) on delete cascade,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check ((client_type = 'public') = (secret_hash is null))
);
create index oauth_clients_owner on oauth_clients (owner_user_id, created_at desc);
