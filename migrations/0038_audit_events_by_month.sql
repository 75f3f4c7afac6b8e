-- The activity log partitioned by month of created_at (issue 35), as gps_points is (0035): retention
-- (audit.retention_days) drops whole months instead of deleting events one by one. The partitions, by range of
-- created_at (UTC months):
--   audit_events_before    everything before the first month (only a database clock set back writes there)
--   audit_events_yYYYYmMM  one per month, contiguous, from the month of the oldest event to at least three ahead
--   audit_events_after     everything from the month after the last one
-- No DEFAULT partition, for the reason 0035 gives: the months must stay readable one after the other in time
-- order (an ordered Append), so that a page of the newest events opens the newest months only. The job
-- audit-partitions adds months ahead (audit_events_extend), audit-retention drops old ones (audit_events_expire).
-- The primary key must contain the partition key, so it is (id, created_at), and a report refers to its event by
-- both: audit_reports gains audit_event_created_at. The functions below work on any table partitioned this way
-- (month_partitions_*); the audit ones around them keep the reports of moved or dropped events right.

-- The start (UTC) of the month holding `at`, and of the month `months` after it (the session's TimeZone plays no part).
create function utc_month(at timestamptz, months integer default 0) returns timestamptz language sql immutable as $$
  select (date_trunc('month', at at time zone 'UTC') + make_interval(months => months)) at time zone 'UTC'
$$;

-- The month partitions <parent>_yYYYYmMM of `parent`, oldest first, with the month each holds (from its name).
create function month_partitions(parent regclass) returns table (partition regclass, month timestamptz) language sql stable as $$
  select c.oid::regclass, make_timestamp(substr(c.relname, length(c.relname) - 6, 4)::integer, right(c.relname, 2)::integer, 1, 0, 0, 0) at time zone 'UTC'
  from pg_inherits i join pg_class c on c.oid = i.inhrelid join pg_class p on p.oid = i.inhparent
  where i.inhparent = parent and c.relname = p.relname || '_y' || right(c.relname, 7) and right(c.relname, 7) ~ '^\d{4}m\d{2}$'
  order by 2
$$;

-- Creates the partition of `parent` for the month starting at `month`.
create function month_partitions_create(parent regclass, month timestamptz) returns void language plpgsql as $$
begin
  execute format('create table %I partition of %s for values from (%L) to (%L)',
    (select relname from pg_class where oid = parent) || '_y' || to_char(month at time zone 'UTC', 'YYYY"m"MM'), parent, month, utc_month(month, 1));
end
$$;

-- Replaces the catch-all <parent>_<side> ('before' or 'after') by an empty one bounded by `bound`; returns the name
-- of the old one, detached, for the caller to empty (its rows inserted again through `parent`, or dropped).
create function month_partitions_replace_catch_all(parent regclass, side text, bound timestamptz) returns text language plpgsql as $$
declare
  catch_all text := (select relname from pg_class where oid = parent) || '_' || side;
begin
  execute format('alter table %s detach partition %I', parent, catch_all);
  execute format('alter table %I rename to %I', catch_all, catch_all || '_old');
  if side = 'before' then
    execute format('create table %I partition of %s for values from (minvalue) to (%L)', catch_all, parent, bound);
  else
    execute format('create table %I partition of %s for values from (%L) to (maxvalue)', catch_all, parent, bound);
  end if;
  return catch_all || '_old';
end
$$;

-- Adds month partitions after the last one until one holds `until`; returns how many it added. The catch-all
-- after them is made again to start after them, and what it held moves to where its time now belongs.
create function month_partitions_extend(parent regclass, until timestamptz) returns integer language plpgsql as $$
declare
  first_new timestamptz := (select utc_month(max(m.month), 1) from month_partitions(parent) m);
  month timestamptz := first_new;
  added integer := 0;
  old_after text;
begin
  if first_new > until then
    return 0;
  end if;
  while utc_month(first_new, added) <= until loop
    added := added + 1;
  end loop;
  -- The catch-all first: the new months overlap its range.
  old_after := month_partitions_replace_catch_all(parent, 'after', utc_month(first_new, added));
  while month <= until loop
    perform month_partitions_create(parent, month);
    month := utc_month(month, 1);
  end loop;
  execute format('insert into %s select * from %I', parent, old_after);
  execute format('drop table %I', old_after);
  return added;
end
$$;

-- Retention: removes every row of `parent` whose `time_column` is before `cutoff`. Months wholly before it go by
-- dropping their partitions (and the catch-all before them, made again to end where the months now start); the
-- rest, in the month holding the cutoff, by deleting rows. The last month stays (emptied by the delete when the
-- cutoff is past it, after months ahead were not made for long), so that the catch-all before has a bound. A
-- referenced partition cannot be detached while rows refer to it: the caller removes those first.
create function month_partitions_expire(parent regclass, time_column text, cutoff timestamptz, out partitions_dropped integer, out rows_deleted bigint) language plpgsql as $$
declare
  old_month record;
begin
  partitions_dropped := 0;
  for old_month in select m.partition from month_partitions(parent) m
      where utc_month(m.month, 1) <= cutoff and m.month < (select max(l.month) from month_partitions(parent) l) loop
    execute format('alter table %s detach partition %s', parent, old_month.partition);
    execute format('drop table %s', old_month.partition);
    partitions_dropped := partitions_dropped + 1;
  end loop;
  if partitions_dropped > 0 then
    execute format('drop table %I', month_partitions_replace_catch_all(parent, 'before', (select min(m.month) from month_partitions(parent) m)));
  end if;
  execute format('delete from %s where %I < $1', parent, time_column) using cutoff;
  get diagnostics rows_deleted = row_count;
end
$$;

-- A report names its event by the whole key. The old foreign key goes now (it refers to the old table) and comes
-- back on the new one.
alter table audit_reports drop constraint audit_reports_audit_event_id_fkey;
alter table audit_reports add column audit_event_created_at timestamptz;
update audit_reports set audit_event_created_at = audit_events.created_at from audit_events where audit_events.id = audit_reports.audit_event_id;
alter table audit_reports alter column audit_event_created_at set not null;

-- The new table, under the old one's name: the same columns, defaults, not-nulls and checks, in the same order.
alter table audit_events rename to audit_events_unpartitioned;
create table audit_events (like audit_events_unpartitioned including defaults including constraints) partition by range (created_at);

-- Months from the one of the oldest event (this month on an empty table) to three months ahead, and the two
-- catch-alls around them.
do $$
declare
  month timestamptz := utc_month(coalesce((select min(created_at) from audit_events_unpartitioned), now()));
begin
  execute format('create table audit_events_before partition of audit_events for values from (minvalue) to (%L)', month);
  while month <= utc_month(now(), 3) loop
    perform month_partitions_create('audit_events', month);
    month := utc_month(month, 1);
  end loop;
  execute format('create table audit_events_after partition of audit_events for values from (%L) to (maxvalue)', month);
end
$$;

-- Every event, once (the old table's primary key said each id is there once); the indexes after the copy, which
-- is faster into an unindexed table. They are the old table's, per partition.
insert into audit_events select * from audit_events_unpartitioned;
drop table audit_events_unpartitioned;

alter table audit_events add constraint audit_events_pkey primary key (id, created_at);
create index audit_events_time on audit_events (created_at desc);
create index audit_events_user_time on audit_events (user_id, created_at);
create index audit_events_type_time on audit_events (event_type, created_at);
create index audit_events_source_time on audit_events (source_service, created_at);
create index audit_events_status_time on audit_events (status, created_at);
create index audit_events_resource_time on audit_events (resource_type, created_at);
create index audit_events_actor on audit_events (actor_id) where actor_id is not null;
alter table audit_reports add constraint audit_reports_audit_event_fkey
  foreign key (audit_event_id, audit_event_created_at) references audit_events (id, created_at) on delete cascade;

-- Adds months up to the one holding `until` (the job audit-partitions). PostgreSQL does not detach a partition
-- that reports refer to, so the reports of events in audit_events_after (a database clock once far ahead) are
-- set aside while their events move into their months, and put back after.
create function audit_events_extend(until timestamptz) returns integer language plpgsql as $$
declare
  added integer;
begin
  create temporary table audit_reports_moving on commit drop as
    select r.* from audit_reports r join audit_events_after e on e.id = r.audit_event_id and e.created_at = r.audit_event_created_at;
  delete from audit_reports where id in (select id from audit_reports_moving);
  added := month_partitions_extend('audit_events', until);
  insert into audit_reports select * from audit_reports_moving;
  drop table audit_reports_moving;
  return added;
end
$$;

-- Retention (the job audit-retention): every event before `cutoff` goes, its report with it (as the foreign key's
-- cascade would; a dropped partition cascades nothing, and one referred to cannot be detached).
create function audit_events_expire(cutoff timestamptz, out partitions_dropped integer, out events_deleted bigint) language plpgsql as $$
begin
  delete from audit_reports where audit_event_created_at < cutoff;
  select e.partitions_dropped, e.rows_deleted into partitions_dropped, events_deleted from month_partitions_expire('audit_events', 'created_at', cutoff) e;
end
$$;
