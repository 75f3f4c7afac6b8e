-- Trips with their status history, and what trips refer to: locations (with contacts) and categories.

create table locations (
  id uuid primary key default gen_random_uuid(),
  name text not null,
  street text,
  zip text,
  city text,
  country text,
  latitude double precision check (latitude between -90 and 90),
  longitude double precision check (longitude between -180 and 180),
  notes text,
  is_active boolean not null default true,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create table location_contacts (
  id uuid primary key default gen_random_uuid(),
  location_id uuid not null references locations (id) on delete cascade,
  name text not null,
  phone text,
  email text,
  role text,
  created_at timestamptz not null default now()
);
create index location_contacts_location on location_contacts (location_id);

create table trip_categories (
  id uuid primary key default gen_random_uuid(),
  parent_id uuid references trip_categories (id) on delete set null,
  name text not null,
  description text,
  color text,
  is_active boolean not null default true,
  sort_order integer not null default 0,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create table trips (
  id uuid primary key default gen_random_uuid(),
  name text not null,
  description text,
  status text not null default 'draft' check (status in ('draft', 'active', 'paused', 'completed')),
  gps_logging_enabled boolean not null default false,
  device_id uuid references devices (id) on delete set null,
  category_id uuid references trip_categories (id) on delete set null,
  origin_id uuid references locations (id) on delete set null,
  destination_id uuid references locations (id) on delete set null,
  weight_kg double precision,
  notes text,
  tags text[] not null default '{}',
  start_latitude double precision,
  start_longitude double precision,
  end_latitude double precision,
  end_longitude double precision,
  started_at timestamptz,
  ended_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index trips_status_created on trips (status, created_at desc);

-- At most one active GPS-logging trip per device, enforced by the database so that two
-- concurrent activations cannot both succeed.
create unique index trips_one_logging_trip_per_device on trips (device_id)
  where status = 'active' and gps_logging_enabled and device_id is not null;

create table trip_status_history (
  id uuid primary key default gen_random_uuid(),
  trip_id uuid not null references trips (id) on delete cascade,
  old_status text not null,
  new_status text not null,
  changed_by uuid references users (id) on delete set null,
  latitude double precision,
  longitude double precision,
  changed_at timestamptz not null default clock_timestamp()
);
create index trip_status_history_trip on trip_status_history (trip_id, changed_at);

alter table gps_points add constraint gps_points_trip foreign key (trip_id) references trips (id) on delete set null;
