-- Operator-managed settings (create/update/delete through /v1/settings).
create table settings (
  key text primary key,
  value jsonb not null,
  description text,
  is_public boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

-- Pre-seeded configuration: updated through /v1/system-config, never created or deleted there.
create table system_config (
  key text primary key,
  value jsonb not null,
  description text,
  updated_at timestamptz not null default now()
);
