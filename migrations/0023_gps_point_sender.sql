-- Who sent a point: the user behind the API key or session that posted it; null for the system key, and
-- for points from before this migration (who sent those was never recorded). A person's data export holds
-- the points they sent, not every point of a device their key is linked to now (a device passed from one
-- crew's key to another's would otherwise export the first crew's positions to the second).
-- No foreign key: it would cost every inserted point a lookup and a lock of its user row; the purge of a
-- user clears it instead (user.purging). Adding a nullable column without a default rewrites nothing.
alter table gps_points add column sent_by uuid;
-- The export reads one person's points in time order, a batch at a time, along this index; the purge finds them by it.
create index gps_points_sender_time_id on gps_points (sent_by, "timestamp", id) where sent_by is not null;
