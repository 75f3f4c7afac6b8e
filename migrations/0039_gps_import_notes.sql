-- Notes of a GPS import (issue 41): what was read but left out of a stored point without refusing it (an
-- unreadable optional value such as a speed extension), counted in notes_count, the first ones listed (where
-- and what; capped by the service) as refused lists refusals.
alter table gps_imports add column notes_count integer not null default 0;
alter table gps_imports add column notes jsonb not null default '[]';
