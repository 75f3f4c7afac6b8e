-- Devices and the GPS points they send.

create table devices (
  id uuid primary key default gen_random_uuid(),
  name text not null,
  description text,
  device_type text,
  is_active boolean not null default true,
  -- The API key this device sends with; one device per key and one key per device.
  api_key_id uuid unique references api_keys (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create table gps_points (
  id uuid primary key default gen_random_uuid(),
  device_id uuid references devices (id) on delete set null,
  -- Linked to trips by the trips migration (foreign key added there).
  trip_id uuid,
  latitude double precision not null check (latitude between -90 and 90),
  longitude double precision not null check (longitude between -180 and 180),
  altitude double precision,
  heading double precision,
  "timestamp" timestamptz not null,
  speed_kmh double precision not null,
  speed_mps double precision not null,
  speed_mph double precision not null,
  speed_knots double precision not null,
  pdop double precision,
  hdop double precision,
  vdop double precision,
  created_at timestamptz not null default now()
);

-- "Latest point per device" and "latest point overall" are index-only walks from the top.
create index gps_points_device_time on gps_points (device_id, "timestamp" desc);
create index gps_points_time on gps_points ("timestamp" desc);
-- "Points of a trip by time", and the check that a point belongs to a trip.
create index gps_points_trip_time on gps_points (trip_id, "timestamp") where trip_id is not null;
