-- Security notices (issue 34): the browsers and networks each user has signed in from, so a sign-in from a
-- new one can be told by mail, and each user's choice about the notices that may be turned off.
create table sign_in_devices (
  user_id uuid not null references users (id) on delete cascade,
  -- SHA-256 of browser, operating system and network (IPv4 /24, IPv6 /48): neither address nor agent is kept.
  fingerprint text not null,
  first_seen_at timestamptz not null,
  last_seen_at timestamptz not null,
  primary key (user_id, fingerprint)
);
create index sign_in_devices_last_seen on sign_in_devices (last_seen_at);

-- A missing row means every notice is on.
create table security_notice_settings (
  user_id uuid primary key references users (id) on delete cascade,
  new_sign_in boolean not null default true,
  new_api_key boolean not null default true,
  updated_at timestamptz not null default now()
);
