-- Bans: one row per ban, kept as history after it is lifted. A ban is in force while it is not lifted
-- (unbanned_at null) and not past expires_at (null: permanent), so an expired ban ends by itself.

create table user_bans (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references users (id) on delete cascade,
  reason text,
  banned_by uuid references users (id) on delete set null,
  banned_at timestamptz not null default now(),
  expires_at timestamptz,
  unbanned_at timestamptz,
  unbanned_by uuid references users (id) on delete set null,
  check (expires_at is null or expires_at > banned_at),
  check (unbanned_at is not null or unbanned_by is null)
);

-- The credential lookups ask "is a ban of this user in force?" on every cache miss: the bans not
-- lifted, by user. The history list reads all bans of a user, newest first.
create index user_bans_unlifted on user_bans (user_id) where unbanned_at is null;
create index user_bans_user_time on user_bans (user_id, banned_at desc);
