-- Notification channels and rules (issue 44, items 4 and 5): where a user is told (mail, webhook, ntfy, Gotify,
-- Telegram, Web Push) and which events go there. A channel's settings that are not secret are `config`; its
-- secrets (webhook signing secret, tokens, push subscription keys) are one sealed JSON object (SECRET_KEY), never
-- shown. last_* and failing say how sending to it went; failing is set when the outbox gives up on it repeatedly
-- and cleared by the next success.
create table notification_channels (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references users (id) on delete cascade,
  type text not null check (type in ('email', 'webhook', 'ntfy', 'gotify', 'telegram', 'web_push')),
  name text not null check (char_length(name) between 1 and 100),
  config jsonb not null default '{}' check (jsonb_typeof(config) = 'object'),
  secrets_sealed text,
  enabled boolean not null default true,
  last_status integer,
  last_error text,
  last_success_at timestamptz,
  last_failure_at timestamptz,
  failures_in_row integer not null default 0,
  failing boolean not null default false,
  failing_notified_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index notification_channels_user on notification_channels (user_id, created_at, id);

-- A user's rule: these event types, of these devices (null: every device the user may see) and geofences (null:
-- any), go to these of their channels; quiet hours (HH:MM in the user's time zone) hold deliveries until they end.
create table notification_rules (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references users (id) on delete cascade,
  name text not null check (char_length(name) between 1 and 100),
  event_types jsonb not null check (jsonb_typeof(event_types) = 'array'),
  device_ids jsonb check (jsonb_typeof(device_ids) = 'array'),
  geofence_ids jsonb check (jsonb_typeof(geofence_ids) = 'array'),
  channel_ids jsonb not null check (jsonb_typeof(channel_ids) = 'array'),
  quiet_from text check (quiet_from ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'),
  quiet_to text check (quiet_to ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'),
  enabled boolean not null default true,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check ((quiet_from is null) = (quiet_to is null))
);
create index notification_rules_user on notification_rules (user_id, created_at, id);

-- The instance's VAPID key pair (Web Push), made once; the private key sealed.
create table notification_vapid_keys (
  id boolean primary key default true check (id),
  public_key text not null,
  private_key_sealed text not null,
  created_at timestamptz not null default now()
);

insert into permissions (resource, action, description) values
  ('notifications', 'read', 'Read your notification channels, rules and deliveries'),
  ('notifications', 'write', 'Create, change, test and delete your notification channels and rules')
on conflict (resource, action) do nothing;

insert into role_permissions (role_id, permission_id)
select roles.id, p.id
from permissions p
cross join (values ('role_user'), ('role_api_full_access')) as roles (id)
where p.resource = 'notifications' and p.action in ('read', 'write')
on conflict do nothing;
