-- Events (issue 44): what happened to a device, stored once each. Geofence events are evaluated as points
-- arrive (source 'server') or reported by the device itself (OwnTracks transition messages, source 'device');
-- the other types come with their evaluators. `subject` makes a transition unique with the device, type and
-- time: the geofence's id (kept when the geofence is deleted and geofence_id becomes null), a device-reported
-- region's name, or '' for events about the device alone; the same batch evaluated on two nodes at once
-- inserts one row (on conflict do nothing).
create table events (
  id uuid primary key default gen_random_uuid(),
  type text not null check (type in ('geofence_enter', 'geofence_exit', 'geofence_dwell', 'device_offline',
    'device_online', 'overspeed', 'low_battery', 'sos')),
  device_id uuid not null references devices (id) on delete cascade,
  geofence_id uuid references geofences (id) on delete set null,
  subject text not null default '',
  occurred_at timestamptz not null,
  source text not null default 'server' check (source in ('server', 'device')),
  latitude double precision check (latitude between -90 and 90),
  longitude double precision check (longitude between -180 and 180),
  details jsonb not null default '{}' check (jsonb_typeof(details) = 'object'),
  created_at timestamptz not null default now(),
  constraint events_transition unique (device_id, type, subject, occurred_at)
);

create index events_recent on events (occurred_at desc, id desc);
create index events_device on events (device_id, occurred_at desc, id desc);
create index events_geofence on events (geofence_id, occurred_at desc) where geofence_id is not null;

-- Per device: the time of the newest point evaluated. Its row is locked by every evaluation (so batches of one
-- device are evaluated one after the other), and a point not newer than it changes nothing (a late point).
create table event_device_state (
  device_id uuid primary key references devices (id) on delete cascade,
  last_point_at timestamptz
);

-- Per device and geofence: inside or not since when, and whether this stay's dwell event fired. A row exists
-- once the device was evaluated inside the geofence; no row is outside.
create table geofence_presence (
  device_id uuid not null references devices (id) on delete cascade,
  geofence_id uuid not null references geofences (id) on delete cascade,
  inside boolean not null,
  since timestamptz not null,
  last_point_at timestamptz not null,
  dwell_fired boolean not null default false,
  primary key (device_id, geofence_id)
);
create index geofence_presence_geofence on geofence_presence (geofence_id);
