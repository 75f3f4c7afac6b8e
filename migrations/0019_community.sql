-- Chat-community records the community bot reports (guilds, channels, roles, members), the bot's
-- settings and per-guild settings. Platform ids (snowflakes) are text: they exceed 2^53.
create table community_guilds (
  id uuid primary key default gen_random_uuid(),
  guild_id text not null unique,
  name text not null,
  icon text,
  owner_id text,
  member_count integer not null default 0,
  boost_count integer not null default 0,
  premium_tier smallint not null default 0 check (premium_tier between 0 and 3),
  bot_joined_at timestamptz,
  last_synced_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create table community_channels (
  id uuid primary key default gen_random_uuid(),
  guild_id uuid not null references community_guilds (id) on delete cascade,
  channel_id text not null unique,
  name text not null,
  channel_type integer not null,
  parent_id text,
  position integer not null default 0,
  topic text,
  nsfw boolean not null default false
);
create index community_channels_guild on community_channels (guild_id, position);

create table community_roles (
  id uuid primary key default gen_random_uuid(),
  guild_id uuid not null references community_guilds (id) on delete cascade,
  role_id text not null,
  name text not null,
  color integer not null default 0,
  position integer not null default 0,
  permissions text not null default '0',
  managed boolean not null default false,
  mentionable boolean not null default false,
  hoist boolean not null default false,
  unique (guild_id, role_id)
);

create table community_members (
  id uuid primary key default gen_random_uuid(),
  guild_id uuid not null references community_guilds (id) on delete cascade,
  user_id text not null,
  username text not null,
  discriminator text,
  global_name text,
  nickname text,
  avatar text,
  bot boolean not null default false,
  system boolean not null default false,
  joined_at timestamptz,
  premium_since timestamptz,
  deaf boolean not null default false,
  mute boolean not null default false,
  pending boolean not null default false,
  communication_disabled_until timestamptz,
  roles text[] not null default '{}',
  unique (guild_id, user_id)
);
create index community_members_roles on community_members using gin (roles);

-- A member sync in progress: the bot's batches land here and replace the guild's members in one
-- transaction when the last one has arrived, so a sync that fails half-way changes nothing.
create table community_member_staging (
  sync_id uuid not null,
  user_id text not null,
  username text not null,
  discriminator text,
  global_name text,
  nickname text,
  avatar text,
  bot boolean not null,
  system boolean not null,
  joined_at timestamptz,
  premium_since timestamptz,
  deaf boolean not null,
  mute boolean not null,
  pending boolean not null,
  communication_disabled_until timestamptz,
  roles text[] not null,
  staged_at timestamptz not null default now(),
  primary key (sync_id, user_id)
);

create table community_bot_settings (
  id uuid primary key default gen_random_uuid(),
  singleton boolean not null default true unique check (singleton),
  auto_sync_enabled boolean not null default true,
  sync_interval_seconds integer not null default 3600,
  initial_delay_seconds integer not null default 30,
  default_language text not null default 'en',
  notify_on_guild_join boolean not null default true,
  notify_on_guild_leave boolean not null default true,
  command_cooldown_seconds integer not null default 3,
  updated_at timestamptz not null default now()
);
insert into community_bot_settings default values;

create table community_guild_settings (
  guild_id text primary key,
  default_language text,
  updated_at timestamptz not null default now()
);
