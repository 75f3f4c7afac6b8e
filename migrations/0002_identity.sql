-- Identity and access: users, login platforms, roles and permissions, API keys, sessions, audit trail.

create table platforms (
  id uuid primary key default gen_random_uuid(),
  name text not null,
  slug text not null unique,
  is_oauth boolean not null default false,
  enabled boolean not null default true,
  two_factor_supported boolean not null default true,
  two_factor_required boolean not null default false,
  registration_enabled boolean not null default true,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

insert into platforms (name, slug, is_oauth) values ('Email', 'email', false);

create table users (
  id uuid primary key default gen_random_uuid(),
  -- Stored lower case; 3-30 letters, digits, underscores.
  username text not null unique check (username ~ '^[a-z0-9_]{3,30}$'),
  primary_platform_account_id uuid,
  privacy_mode boolean not null default false,
  avatars_enabled boolean not null default true,
  preferred_locale text,
  last_login_at timestamptz,
  deleted_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create table platform_accounts (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references users (id) on delete cascade,
  platform_id uuid not null references platforms (id),
  -- For the email platform this is the (lower-case) email address.
  platform_user_id text not null,
  username text,
  email text,
  avatar_url text,
  password_hash text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (platform_id, platform_user_id)
);
create index platform_accounts_user on platform_accounts (user_id);
create index platform_accounts_email on platform_accounts (email);

alter table users add constraint users_primary_platform_account
  foreign key (primary_platform_account_id) references platform_accounts (id) on delete set null;

create table roles (
  id text primary key check (id ~ '^role_[a-z0-9_]{1,60}$'),
  name text not null unique,
  description text,
  is_system boolean not null default false,
  -- Holders of a super-admin role may do everything (the built-in Admin role).
  is_super_admin boolean not null default false,
  requires_two_factor boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create table permissions (
  id uuid primary key default gen_random_uuid(),
  resource text not null check (resource ~ '^([a-z][a-z0-9_]*|\*)$'),
  action text not null check (action ~ '^([a-z][a-z0-9_.]*|\*)$'),
  description text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (resource, action)
);

create table role_permissions (
  role_id text not null references roles (id) on delete cascade,
  permission_id uuid not null references permissions (id) on delete cascade,
  primary key (role_id, permission_id)
);

create table user_roles (
  user_id uuid not null references users (id) on delete cascade,
  role_id text not null references roles (id) on delete cascade,
  created_at timestamptz not null default now(),
  primary key (user_id, role_id)
);
create index user_roles_role on user_roles (role_id);

create table api_keys (
  id uuid primary key default gen_random_uuid(),
  -- SHA-256 of the full key, hex; the key itself is never stored.
  key_hash text not null unique,
  key_prefix text not null,
  name text not null,
  description text,
  scopes text[] not null default '{}',
  is_active boolean not null default true,
  is_system boolean not null default false,
  user_id uuid references users (id) on delete cascade,
  expires_at timestamptz,
  last_used_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index api_keys_user on api_keys (user_id);

create table api_key_roles (
  api_key_id uuid not null references api_keys (id) on delete cascade,
  role_id text not null references roles (id) on delete cascade,
  primary key (api_key_id, role_id)
);

create table sessions (
  id uuid primary key default gen_random_uuid(),
  token_hash text not null unique,
  user_id uuid not null references users (id) on delete cascade,
  provider text not null,
  ip_address text,
  user_agent text,
  last_activity_at timestamptz not null default now(),
  expires_at timestamptz not null,
  created_at timestamptz not null default now()
);
create index sessions_user on sessions (user_id);

create table audit_events (
  id uuid primary key default gen_random_uuid(),
  -- Text, not a foreign key: bots may record external ids, and events outlive users.
  user_id text,
  event_type text not null,
  resource_type text,
  resource_id text,
  actor_id text,
  ip_address text,
  user_agent text,
  description text,
  metadata jsonb not null default '{}',
  status text not null default 'success' check (status in ('success', 'failure')),
  error_message text,
  source_service text not null default 'api',
  is_reported boolean not null default false,
  created_at timestamptz not null default now()
);
create index audit_events_user_time on audit_events (user_id, created_at desc);
create index audit_events_time on audit_events (created_at desc);

-- The permission catalogue used anywhere in the interface.
insert into permissions (resource, action, description)
select r, a, case when a = '*' then 'Everything on ' || replace(r, '_', ' ')
                 else initcap(replace(a, '_', ' ')) || ' ' || replace(r, '_', ' ') end
from (values
  ('*', '*'),
  ('gps', '*'), ('devices', '*'), ('trips', '*'), ('locations', '*'),
  ('geofences', '*'), ('trip_categories', '*'), ('settings', '*'), ('pegel', '*'),
  ('gps', 'read'), ('gps', 'write'), ('gps', 'delete'),
  ('devices', 'read'), ('devices', 'write'), ('devices', 'delete'),
  ('trips', 'read'), ('trips', 'write'), ('trips', 'delete'),
  ('locations', 'read'), ('locations', 'write'), ('locations', 'delete'),
  ('geofences', 'read'), ('geofences', 'write'), ('geofences', 'delete'),
  ('trip_categories', 'read'), ('trip_categories', 'write'), ('trip_categories', 'delete'),
  ('settings', 'read'), ('settings', 'write'), ('settings', 'delete'),
  ('pegel', 'read'),
  ('users', 'read'), ('users', 'write'), ('users', 'delete'), ('users', 'ban'),
  ('two_factor', 'manage'),
  ('api_keys', 'read'), ('api_keys', 'write'), ('api_keys', 'delete'),
  ('roles', 'read'), ('roles', 'write'), ('roles', 'delete'),
  ('permissions', 'read'), ('permissions', 'write'),
  ('audit', 'read'), ('audit', 'write'),
  ('community', 'read'), ('community', 'edit'), ('community', 'delete'), ('community', 'sync'), ('community', 'guild.sync')
) as catalogue (r, a);
update permissions set description = 'Everything' where resource = '*' and action = '*';

insert into roles (id, name, description, is_system, is_super_admin) values
  ('role_admin', 'Admin', 'Super administrator: may do everything', true, true),
  ('role_api_read_only', 'API Read Only', 'View GPS and tracking data, users and roles', true, false),
  ('role_api_full_access', 'API Full Access', 'Create, update and delete all tracking resources', true, false),
  ('role_user', 'User', 'Default role of registered users', true, false),
  ('role_developer', 'Developer', 'May own API keys and OAuth clients', true, false);

insert into role_permissions (role_id, permission_id)
select grants.role_id, p.id
from (values
  ('role_admin', '*', '*'),
  ('role_api_read_only', 'gps', 'read'), ('role_api_read_only', 'devices', 'read'),
  ('role_api_read_only', 'trips', 'read'), ('role_api_read_only', 'locations', 'read'),
  ('role_api_read_only', 'geofences', 'read'), ('role_api_read_only', 'trip_categories', 'read'),
  ('role_api_read_only', 'pegel', 'read'), ('role_api_read_only', 'users', 'read'),
  ('role_api_read_only', 'roles', 'read'),
  ('role_api_full_access', 'gps', '*'), ('role_api_full_access', 'devices', '*'),
  ('role_api_full_access', 'trips', '*'), ('role_api_full_access', 'locations', '*'),
  ('role_api_full_access', 'geofences', '*'), ('role_api_full_access', 'trip_categories', '*'),
  ('role_api_full_access', 'settings', '*'), ('role_api_full_access', 'pegel', '*'),
  ('role_api_full_access', 'users', 'read'), ('role_api_full_access', 'roles', 'read'),
  ('role_developer', 'api_keys', 'read'), ('role_developer', 'api_keys', 'write'),
  ('role_developer', 'api_keys', 'delete')
) as grants (role_id, resource, action)
join permissions p on p.resource = grants.resource and p.action = grants.action;
