-- Paging a trip's points needs their total; counting 100,000 rows per page is too slow,
-- so the count is kept on the trip by a trigger that sees every way a point joins or leaves it.
alter table trips add column gps_point_count bigint not null default 0;

update trips set gps_point_count = (select count(*) from gps_points where gps_points.trip_id = trips.id);

create function gps_points_count_trip() returns trigger language plpgsql as $$
begin
  if tg_op in ('UPDATE', 'DELETE') and old.trip_id is not null then
    update trips set gps_point_count = gps_point_count - 1 where id = old.trip_id;
  end if;
  if tg_op in ('INSERT', 'UPDATE') and new.trip_id is not null then
    update trips set gps_point_count = gps_point_count + 1 where id = new.trip_id;
  end if;
  return null;
end
$$;

create trigger gps_points_count_trip
  after insert or delete or update of trip_id on gps_points
  for each row execute function gps_points_count_trip();
