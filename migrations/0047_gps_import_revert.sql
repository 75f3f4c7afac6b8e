-- Removing the points of a GPS file import (issue 49): each point an import stores names it (import_id), so
-- "remove the points of this import" deletes exactly those, never a point the device had already (a duplicate
-- in the file is not stored, so it is not named) nor one a phone sent meanwhile. The column has no default, so
-- PostgreSQL only records it in the catalogue (no partition is rewritten), and no index: an import also keeps
-- the time of its first and last point, and the removal walks the device's points in that range through the
-- index every device read uses (gps_points_same_fix), in the months that range touches. Points written before
-- this, and every point not from a file, have none. reverted_at and removed say when the points were removed
-- last and how many in all.
alter table gps_points add column import_id uuid;

alter table gps_imports add column first_point_at timestamptz;
alter table gps_imports add column last_point_at timestamptz;
alter table gps_imports add column reverted_at timestamptz;
alter table gps_imports add column removed integer not null default 0;
create index gps_imports_created_by on gps_imports (created_by, created_at desc);
