-- The trip point count (0007) was kept by a trigger per row: a batch of 10,000 points on a logging trip updated
-- the trip's row 10,000 times in one transaction (10,000 row versions), and every point paid a trigger call even
-- without a trip. Now one trigger call per statement, over the rows it changed (transition tables), with one
-- update per trip it touched. PostgreSQL allows transition tables on a trigger of one event without a column
-- list, hence three triggers; the update one returns at once when no row changed its trip.
-- On the table partitioned by month (0035) the statement triggers sit on the parent: PostgreSQL hands them the
-- rows of every partition a statement touched, including the points gps_points_drop_partition inserts again.

drop trigger gps_points_count_trip on gps_points;
drop function gps_points_count_trip();

create function gps_points_count_trip_inserted() returns trigger language plpgsql as $$
begin
  update trips set gps_point_count = gps_point_count + added.n
  from (select trip_id, count(*) as n from new_points where trip_id is not null group by trip_id) added
  where trips.id = added.trip_id;
  return null;
end
$$;

create function gps_points_count_trip_deleted() returns trigger language plpgsql as $$
begin
  update trips set gps_point_count = gps_point_count - removed.n
  from (select trip_id, count(*) as n from old_points where trip_id is not null group by trip_id) removed
  where trips.id = removed.trip_id;
  return null;
end
$$;

create function gps_points_count_trip_updated() returns trigger language plpgsql as $$
begin
  update trips set gps_point_count = gps_point_count + moved.n
  from (
    select trip_id, sum(n) as n from (
      select o.trip_id, -1 as n from old_points o join new_points p on p.id = o.id
        where o.trip_id is not null and o.trip_id is distinct from p.trip_id
      union all
      select p.trip_id, 1 as n from old_points o join new_points p on p.id = o.id
        where p.trip_id is not null and o.trip_id is distinct from p.trip_id
    ) changes group by trip_id
  ) moved
  where trips.id = moved.trip_id;
  return null;
end
$$;

create trigger gps_points_count_trip_inserted after insert on gps_points
  referencing new table as new_points for each statement execute function gps_points_count_trip_inserted();
create trigger gps_points_count_trip_deleted after delete on gps_points
  referencing old table as old_points for each statement execute function gps_points_count_trip_deleted();
create trigger gps_points_count_trip_updated after update on gps_points
  referencing old table as old_points new table as new_points for each statement execute function gps_points_count_trip_updated();
