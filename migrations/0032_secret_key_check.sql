-- A value sealed with the key of secrets at rest (SECRET_KEY or DATA_DIR/secret.key), written on the first
-- start after this migration: each start opens it, so a start with another key stops at once, naming the
-- mismatch, instead of answering 500 wherever a sealed secret is read (the OAuth JWKS, 2FA, integrations).
create table secret_key_check (
  id smallint primary key default 1 check (id = 1),
  sealed text not null,
  created_at timestamptz not null default now()
);
