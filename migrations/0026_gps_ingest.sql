-- Real trackers (issue 31): what the apps send beyond the spec's fields, and one point per device, time and
-- position, so that a phone resending a point it saw no answer for (every client does) stores it once.

-- All optional: a point that did not report one has null.
alter table gps_points
  -- Horizontal accuracy in metres (Traccar accuracy, OwnTracks acc, Overland horizontal_accuracy, GPSLogger %ACC).
  add column accuracy double precision check (accuracy >= 0),
  -- Battery charge in percent, 0 to 100 (Overland's and Traccar 9's 0..1 are multiplied by 100).
  add column battery_level double precision check (battery_level between 0 and 100),
  -- Whether the battery was charging (or full, on the charger).
  add column charging boolean,
  -- The activity the phone reported: walking, running, cycling, driving, stationary, still…; several joined by commas.
  add column motion text check (length(motion) <= 200),
  -- An alarm the device raised with the point: sos from Traccar Client's SOS button, or what the device named.
  add column alarm text check (length(alarm) <= 100);

-- A tracker that does not know its speed says so (-1, or nothing): the four speeds are then null rather than
-- a made-up 0. POST /v1/gps still requires all four.
alter table gps_points
  alter column speed_kmh drop not null,
  alter column speed_mps drop not null,
  alter column speed_mph drop not null,
  alter column speed_knots drop not null;

-- Points sent more than once before this migration: the first stays (one on a trip before one that is not),
-- the rest go; the trip point-count trigger sees each delete.
delete from gps_points p
using (
  select id, row_number() over (
    partition by device_id, "timestamp", latitude, longitude
    order by (trip_id is null), created_at, id
  ) as n
  from gps_points
) ranked
where p.id = ranked.id and ranked.n > 1;

-- The rule of idempotent delivery: inserts say `on conflict do nothing` against this index and read the
-- existing point back, also when two nodes receive the same batch at once. Points without a device are one
-- "device" here (nulls not distinct), so a retried POST /v1/gps without a device is stored once too.
create unique index gps_points_same_fix on gps_points (device_id, "timestamp", latitude, longitude) nulls not distinct;
-- It leads with (device_id, "timestamp"), so it also finds a device's latest point (a backward walk):
-- the index that did only that goes, one index fewer to write per point.
drop index gps_points_device_time;
