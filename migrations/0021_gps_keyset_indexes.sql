-- Keyset pages of GPS points (issue 20): a page continues after the (timestamp, id) of the previous
-- page's last row, so each list's order ends in id and its index carries id too. A page is then one
-- range of an index, however deep into the list, and ties of timestamp come in one fixed order.
-- Newest first (GET /v1/gps; also the latest point overall):
create index gps_points_time_id on gps_points ("timestamp" desc, id desc);
drop index gps_points_time;
-- A trip's points, oldest first (GET /v1/trips/{id}/gps; also the check that a point belongs to a trip):
create index gps_points_trip_time_id on gps_points (trip_id, "timestamp", id) where trip_id is not null;
drop index gps_points_trip_time;
