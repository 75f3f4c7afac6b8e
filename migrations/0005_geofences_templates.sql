-- Circular geofences, and trip templates that new trips can be created from.

create table geofences (
  id uuid primary key default gen_random_uuid(),
  name text not null,
  description text,
  latitude double precision not null check (latitude between -90 and 90),
  longitude double precision not null check (longitude between -180 and 180),
  radius_km double precision not null check (radius_km > 0),
  is_active boolean not null default true,
  metadata jsonb not null default '{}' check (jsonb_typeof(metadata) = 'object'),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

-- A template outlives what it refers to: a deleted category, location or device only clears the reference.
create table trip_templates (
  id uuid primary key default gen_random_uuid(),
  name text not null,
  description text,
  category_id uuid references trip_categories (id) on delete set null,
  origin_id uuid references locations (id) on delete set null,
  destination_id uuid references locations (id) on delete set null,
  device_id uuid references devices (id) on delete set null,
  gps_logging_enabled boolean not null default false,
  default_weight_kg double precision,
  notes text,
  tags text[] not null default '{}',
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
