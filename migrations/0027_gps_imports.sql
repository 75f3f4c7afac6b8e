-- GPS file imports (issue 31): one row per file posted to POST /v1/gps/import, the job's progress and its
-- report. The job runs in the process that took the upload and writes its counters here every chunk, so
-- GET /v1/gps/imports/{id} answers from any node while it runs. refused holds the first refusals
-- (where and why; capped by the service), refused_count all of them.
create table gps_imports (
  id uuid primary key default gen_random_uuid(),
  device_id uuid not null references devices (id) on delete cascade,
  -- Who posted the file (no foreign key, as gps_points.sent_by: a purge clears neither).
  created_by uuid,
  format text not null,
  status text not null default 'running' check (status in ('running', 'done', 'failed')),
  imported integer not null default 0,
  duplicates integer not null default 0,
  refused_count integer not null default 0,
  refused jsonb not null default '[]',
  bytes_read bigint not null default 0,
  bytes_total bigint,
  error_code text,
  error_message text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  finished_at timestamptz
);
create index gps_imports_device_created on gps_imports (device_id, created_at desc);
