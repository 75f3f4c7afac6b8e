-- Scheduled jobs (purges, retention, partitions) run once per period across every node on this database:
-- a node claims a job by a conditional update of its row (due, and not held by a live run), which exactly
-- one of several racing nodes wins; the row then records the run for GET /v1/system/jobs and the metrics.
-- Rows are made by the nodes at start (one per job they know), so a job added in a later version needs no migration.
create table scheduled_jobs (
  name text primary key,
  -- The next periodic run is due from here: the start of the period after the last periodic run.
  next_run_at timestamptz not null,
  -- A run in progress holds the job until this time, renewed while it runs; when a node dies mid-run,
  -- the job is free again once it passes.
  locked_until timestamptz,
  -- The run holding the job (random per run), so a run whose hold lapsed cannot release its successor's.
  locked_by uuid,
  last_started_at timestamptz,
  last_finished_at timestamptz,
  last_duration_ms integer,
  last_outcome text check (last_outcome in ('succeeded', 'failed')),
  -- What the job reported (counts of rows removed, partitions made), or the error's message.
  last_result jsonb,
  last_error text,
  runs bigint not null default 0,
  failures bigint not null default 0
);
