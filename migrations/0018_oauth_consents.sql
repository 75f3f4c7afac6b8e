-- OAuth tokens by user and client (for logout-everywhere, logout-app and consent revocation), and the
-- consents users gave to third-party clients. A consent outlives the tokens it led to: signing out
-- everywhere keeps it; revoking it ends them all.
alter table oauth_artifacts add column account_id text, add column client_id text;
create index oauth_artifacts_account on oauth_artifacts (account_id, client_id) where account_id is not null;

create table oauth_consents (
  user_id uuid not null references users (id) on delete cascade,
  client_id uuid not null references oauth_clients (id) on delete cascade,
  scopes text[] not null,
  granted_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (user_id, client_id)
);
create index oauth_consents_client on oauth_consents (client_id);
