-- One row per personal data export delivered, with the size of the archive the user received.
create table export_logs (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references users (id) on delete cascade,
  exported_at timestamptz not null,
  ip_address text,
  user_agent text,
  export_format text not null default 'zip',
  file_size_bytes bigint not null check (file_size_bytes > 0),
  locale text not null,
  created_at timestamptz not null default now()
);
create index export_logs_user_time on export_logs (user_id, exported_at desc);
