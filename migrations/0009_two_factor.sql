-- Two-factor authentication (TOTP): per-user state, single-use backup codes, and the
-- login challenges that stand between a correct password and a session. TOTP secrets
-- are sealed (AES-256-GCM, SECRET_KEY); backup codes and challenge tokens are stored
-- only as SHA-256 hashes.

create table user_two_factor (
  user_id uuid primary key references users (id) on delete cascade,
  -- The platform the user set 2FA up for (the email platform unless chosen otherwise).
  platform_id uuid not null references platforms (id),
  -- Enabled when both are set.
  secret_sealed text,
  enabled_at timestamptz,
  -- A setup waiting for its first code; replaced by the next setup, dropped when verified.
  pending_secret_sealed text,
  pending_expires_at timestamptz,
  -- RFC 6238 time step of the last accepted code: a code of the same or an earlier step is a replay.
  last_used_step integer,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check ((secret_sealed is null) = (enabled_at is null)),
  check ((pending_secret_sealed is null) = (pending_expires_at is null))
);

create table two_factor_backup_codes (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references users (id) on delete cascade,
  code_hash text not null,
  used_at timestamptz,
  created_at timestamptz not null default now(),
  unique (user_id, code_hash)
);

create table two_factor_challenges (
  id uuid primary key default gen_random_uuid(),
  -- SHA-256 of the temporary token (2fa_ + 256 random bits).
  token_hash text not null unique,
  user_id uuid not null references users (id) on delete cascade,
  -- Provider slug the session will carry once the code is verified.
  provider text not null,
  -- Codes tried so far; counted before each check, so the limit holds under parallel guesses.
  attempts integer not null default 0,
  expires_at timestamptz not null,
  consumed_at timestamptz,
  created_at timestamptz not null default now()
);
create index two_factor_challenges_user on two_factor_challenges (user_id);
