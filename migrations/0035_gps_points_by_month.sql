-- GPS points partitioned by month of their time (issue 35): retention drops whole months instead of deleting
-- rows one by one, and reads of recent points touch recent months only. The partitions, all by range of
-- "timestamp" (UTC months):
--   gps_points_before    everything before the first month (points older than the oldest month kept)
--   gps_points_yYYYYmMM  one per month, contiguous, from the first month to at least three months ahead
--   gps_points_after     everything from the month after the last one (a device with a clock far ahead)
-- No DEFAULT partition: with one, PostgreSQL can no longer read the partitions one after the other in time
-- order (an ordered Append, which stops at the first month holding the newest point); it must merge them all.
-- The scheduled job gps-partitions adds months ahead (gps_points_extend) and, for points that arrived in
-- gps_points_before, behind (gps_points_extend_back); gps-retention drops old ones (gps_points_expire). Every index of the old table is here, per partition; the primary key must contain the
-- partition key, so it is (id, "timestamp"). Nothing refers to a point's id by foreign key.

-- The new table: the same columns, defaults, not-nulls and checks, in the same order.
create table gps_points_by_month (like gps_points including defaults including constraints) partition by range ("timestamp");

-- The start (UTC) of the month holding `at`, and of the month `months` after it: timestamps without zone, so
-- that the session's TimeZone plays no part.
create function gps_points_month(at timestamptz, months integer default 0) returns timestamptz language sql immutable as $$
  select (date_trunc('month', at at time zone 'UTC') + make_interval(months => months)) at time zone 'UTC'
$$;

-- The month a partition gps_points_yYYYYmMM holds, from its name.
create function gps_points_month_of(partition_name text) returns timestamptz language sql immutable as $$
  select make_timestamp(substr(partition_name, 13, 4)::integer, substr(partition_name, 18, 2)::integer, 1, 0, 0, 0) at time zone 'UTC'
$$;

-- The month partitions of gps_points, oldest first.
create function gps_points_months() returns table (partition regclass, month timestamptz) language sql stable as $$
  select c.oid::regclass, gps_points_month_of(c.relname)
  from pg_inherits i join pg_class c on c.oid = i.inhrelid
  where i.inhparent = 'gps_points'::regclass and c.relname ~ '^gps_points_y\d{4}m\d{2}$'
  order by 2
$$;

-- Months from the one of the oldest point (this month on an empty table) to three months ahead, and the two
-- catch-alls around them.
do $$
declare
  first_month timestamptz := gps_points_month(coalesce((select min("timestamp") from gps_points), now()));
  last_month timestamptz := gps_points_month(now(), 3);
  month timestamptz := first_month;
begin
  execute format('create table gps_points_before partition of gps_points_by_month for values from (minvalue) to (%L)', first_month);
  while month <= last_month loop
    execute format('create table %I partition of gps_points_by_month for values from (%L) to (%L)',
      'gps_points_y' || to_char(month at time zone 'UTC', 'YYYY"m"MM'), month, gps_points_month(month, 1));
    month := gps_points_month(month, 1);
  end loop;
  execute format('create table gps_points_after partition of gps_points_by_month for values from (%L) to (maxvalue)', month);
end
$$;

-- Every point, once: the old table has no duplicate of (device, time, position) (its unique index said so),
-- and the new one gets the same index after the copy (a copy into an unindexed table is faster). The trip
-- point-count trigger is made after the copy too: the counts on trips already include these points.
insert into gps_points_by_month select * from gps_points;
drop table gps_points;
alter table gps_points_by_month rename to gps_points;

alter table gps_points add constraint gps_points_pkey primary key (id, "timestamp");
alter table gps_points add constraint gps_points_device_id_fkey foreign key (device_id) references devices (id) on delete set null;
alter table gps_points add constraint gps_points_trip foreign key (trip_id) references trips (id) on delete set null;
create unique index gps_points_same_fix on gps_points (device_id, "timestamp", latitude, longitude) nulls not distinct;
create index gps_points_time_id on gps_points ("timestamp" desc, id desc);
create index gps_points_trip_time_id on gps_points (trip_id, "timestamp", id) where trip_id is not null;
create index gps_points_sender_time_id on gps_points (sent_by, "timestamp", id) where sent_by is not null;
create trigger gps_points_count_trip
  after insert or delete or update of trip_id on gps_points
  for each row execute function gps_points_count_trip();

-- Drops a partition (already detached, or a month past retention) and takes its points off their trips'
-- counts: dropping a table fires no trigger. With `reinsert`, its points are inserted again through the
-- parent first (each lands in the partition now holding its time, and the trigger counts it back).
create function gps_points_drop_partition(partition_table regclass, reinsert boolean) returns void language plpgsql as $$
begin
  execute format(
    'update trips set gps_point_count = gps_point_count - counted.n
       from (select trip_id, count(*) as n from %s where trip_id is not null group by trip_id) as counted
      where trips.id = counted.trip_id', partition_table);
  if reinsert then
    execute format('insert into gps_points select * from %s', partition_table);
  end if;
  execute format('drop table %s', partition_table);
end
$$;

-- Adds month partitions after the last one until one holds `until`; returns how many it added. Run by the job
-- gps-partitions (once across nodes). gps_points_after is made again to start after them, and the points it
-- held (a clock far ahead) move to where their time now belongs.
create function gps_points_extend(until timestamptz) returns integer language plpgsql as $$
declare
  month timestamptz := (select gps_points_month(max(m.month), 1) from gps_points_months() m);
  added integer := 0;
begin
  if month > until then
    return 0;
  end if;
  alter table gps_points detach partition gps_points_after;
  alter table gps_points_after rename to gps_points_after_old;
  while month <= until loop
    execute format('create table %I partition of gps_points for values from (%L) to (%L)',
      'gps_points_y' || to_char(month at time zone 'UTC', 'YYYY"m"MM'), month, gps_points_month(month, 1));
    added := added + 1;
    month := gps_points_month(month, 1);
  end loop;
  execute format('create table gps_points_after partition of gps_points for values from (%L) to (maxvalue)', month);
  perform gps_points_drop_partition('gps_points_after_old'::regclass, true);
  return added;
end
$$;

-- Adds month partitions before the first one, down to the month holding `since`; returns how many it added.
-- gps_points_before is made again to end where they start, and the points it held move into their months. The
-- job gps-partitions calls it for the oldest point in gps_points_before (an import of old tracks), at most ten
-- years back (a device whose clock says 1970 must not make 670 partitions; older points stay in gps_points_before).
create function gps_points_extend_back(since timestamptz) returns integer language plpgsql as $$
declare
  first_month timestamptz := (select min(m.month) from gps_points_months() m);
  target timestamptz := gps_points_month(since);
  month timestamptz;
  added integer := 0;
begin
  if target >= first_month then
    return 0;
  end if;
  alter table gps_points detach partition gps_points_before;
  alter table gps_points_before rename to gps_points_before_old;
  month := target;
  while month < first_month loop
    execute format('create table %I partition of gps_points for values from (%L) to (%L)',
      'gps_points_y' || to_char(month at time zone 'UTC', 'YYYY"m"MM'), month, gps_points_month(month, 1));
    added := added + 1;
    month := gps_points_month(month, 1);
  end loop;
  execute format('create table gps_points_before partition of gps_points for values from (minvalue) to (%L)', target);
  perform gps_points_drop_partition('gps_points_before_old'::regclass, true);
  return added;
end
$$;

-- Retention: removes every point older than `cutoff`. Months wholly before it go by dropping their partitions
-- (and gps_points_before with them: all it holds is older still; it is made again to end where the months now
-- start); the rest, in the month holding the cutoff, by deleting rows. Points of trips go too (the trips stay,
-- with their counts lowered). Run by the job gps-retention (once across nodes).
create function gps_points_expire(cutoff timestamptz, out partitions_dropped integer, out points_deleted bigint) language plpgsql as $$
declare
  old_month record;
begin
  partitions_dropped := 0;
  for old_month in select m.partition from gps_points_months() m where gps_points_month(m.month, 1) <= cutoff loop
    perform gps_points_drop_partition(old_month.partition, false);
    partitions_dropped := partitions_dropped + 1;
  end loop;
  if partitions_dropped > 0 then
    alter table gps_points detach partition gps_points_before;
    alter table gps_points_before rename to gps_points_before_old;
    execute format('create table gps_points_before partition of gps_points for values from (minvalue) to (%L)', (select min(m.month) from gps_points_months() m));
    perform gps_points_drop_partition('gps_points_before_old'::regclass, false);
  end if;
  delete from gps_points where "timestamp" < cutoff;
  get diagnostics points_deleted = row_count;
end
$$;

-- How long points and activity-log events are kept, in days; null keeps them for ever. Applied once a day by
-- the jobs gps-retention and audit-retention.
insert into system_config (key, value, description) values
  ('gps.retention_days', 'null', 'Days GPS points are kept (points of trips too; the trips stay); null keeps them for ever. Applied daily'),
  ('audit.retention_days', 'null', 'Days activity-log events are kept; null keeps them for ever. Applied daily')
on conflict (key) do nothing;
