-- Per-user connections to streaming platforms (Twitch). The provider's tokens are sealed with the secret box
-- (AES-256-GCM under SECRET_KEY), never stored in the clear. One connection per user and platform: connecting
-- again replaces the account and its tokens and keeps the id and bot_status. Deleting the user deletes them.
create table integrations (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references users (id) on delete cascade,
  platform_slug text not null,
  platform_user_id text not null,
  username text not null,
  display_name text not null,
  profile_image_url text,
  scopes text[] not null default '{}',
  is_active boolean not null default true,
  bot_status text not null default 'active' check (bot_status in ('active', 'paused', 'disabled')),
  access_token_sealed text not null,
  refresh_token_sealed text,
  token_expires_at timestamptz,
  connected_at timestamptz not null,
  last_refreshed_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint integrations_user_platform unique (user_id, platform_slug)
);
