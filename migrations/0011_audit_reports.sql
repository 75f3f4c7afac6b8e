-- The activity log gains location fields (from a GeoIP database when one is configured) and the
-- suspicious-activity reports users file on their own events. Whether an event is reported is read
-- from the reports (one per event), so the flag column goes.

alter table audit_events drop column is_reported;
alter table audit_events
  add column country_code text,
  add column country_name text,
  add column city text,
  add column region text;

-- The admin list filters by one column and sorts by time, or sorts by a column and then by time in the
-- same direction: an index (column, time) per filter serves both, read forwards or backwards, so each
-- page is an index range scan at tens of millions of events (bench/audit-scale.js).
drop index audit_events_user_time;
create index audit_events_user_time on audit_events (user_id, created_at);
create index audit_events_type_time on audit_events (event_type, created_at);
create index audit_events_source_time on audit_events (source_service, created_at);
create index audit_events_status_time on audit_events (status, created_at);
create index audit_events_resource_time on audit_events (resource_type, created_at);

create table audit_reports (
  id uuid primary key default gen_random_uuid(),
  audit_event_id uuid not null unique references audit_events (id) on delete cascade,
  user_id uuid not null references users (id) on delete cascade,
  reason text not null check (reason in ('not_me', 'suspicious', 'unknown_device', 'unknown_location', 'other')),
  description text,
  status text not null default 'pending' check (status in ('pending', 'reviewed', 'resolved', 'dismissed')),
  reviewed_by uuid references users (id) on delete set null,
  reviewed_at timestamptz,
  resolution_notes text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index audit_reports_user_time on audit_reports (user_id, created_at desc);
create index audit_reports_status_time on audit_reports (status, created_at desc);
