-- Preferences per user (issue 49): the units, time zone and coordinate format the console shows (mails and the
-- names of export files are to follow them). A user without a row has the defaults; a null time zone is the
-- browser's. preferences:read/write let an API key or OAuth token reach them (a session needs neither); the
-- User role holds both, so that a user may put them on a key of their own.
create table user_preferences (
  user_id uuid primary key references users (id) on delete cascade,
  speed_unit text not null default 'kmh' check (speed_unit in ('kmh', 'mph', 'knots')),
  distance_unit text not null default 'km' check (distance_unit in ('km', 'mi', 'nmi')),
  time_zone text check (char_length(time_zone) between 1 and 64),
  coordinate_format text not null default 'decimal' check (coordinate_format in ('decimal', 'dm', 'dms')),
  updated_at timestamptz not null default now()
);

insert into permissions (resource, action, description) values
  ('preferences', 'read', 'Read your own preferences (units, time zone, coordinate format)'),
  ('preferences', 'write', 'Change your own preferences')
on conflict (resource, action) do nothing;

insert into role_permissions (role_id, permission_id)
select 'role_user', p.id
from permissions p
where (p.resource, p.action) in (('preferences', 'read'), ('preferences', 'write'))
on conflict do nothing;
