-- Passkeys (WebAuthn credentials) of users: sign-in without a password, discoverable ("usernameless").
create table passkeys (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references users (id) on delete cascade,
  -- The credential id as the browser reports it (base64url); unique across every user.
  credential_id text not null unique,
  -- The COSE public key, base64url.
  public_key text not null,
  -- The authenticator's signature counter (0 for authenticators that keep none); a counter going back means a clone.
  counter bigint not null default 0 check (counter >= 0),
  transports text[] not null default '{}',
  -- singleDevice or multiDevice (synced), and whether it is backed up now.
  device_type text not null,
  backed_up boolean not null,
  -- Whether the authenticator verified the user (PIN, biometrics) when the passkey was registered.
  user_verified boolean not null,
  name text not null check (length(name) between 1 and 100),
  created_at timestamptz not null default now(),
  last_used_at timestamptz
);
create index passkeys_user on passkeys (user_id, created_at);
