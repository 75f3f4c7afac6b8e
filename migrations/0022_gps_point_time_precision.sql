-- A keyset cursor carries the time of a page's last point to the millisecond (JavaScript's Date), so a
-- point's time must not be finer, or a page would repeat or skip points of the same millisecond. Points
-- come in whole seconds (POST /v1/gps takes Unix seconds); this keeps every future path to that precision.
-- NOT VALID: the existing rows, all written in whole seconds, are not scanned (no long lock on a big table).
alter table gps_points add constraint gps_points_time_in_milliseconds
  check (date_trunc('milliseconds', "timestamp") = "timestamp") not valid;
