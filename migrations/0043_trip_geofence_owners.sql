-- Trips and geofences under the visibility rule of issue 43 (docs/sharing.md). One rule for both: one made in
-- the own scope (by a user without the global permission) belongs to its maker; one made with the global
-- permission, and every one made before this, is instance-wide (owner null), seen by holders of the global
-- permission only. A self-service user also sees the trips of devices they own or reach at level full, and the
-- geofences of the owners who share a device with them at level full.
alter table trips add column owner_id uuid references users (id) on delete set null;
alter table geofences add column owner_id uuid references users (id) on delete set null;

create index trips_owner on trips (owner_id, created_at desc) where owner_id is not null;
create index trips_device on trips (device_id, created_at desc) where device_id is not null;
create index geofences_owner on geofences (owner_id, created_at desc) where owner_id is not null;

insert into permissions (resource, action, description) values
  ('trips', 'read_own', 'Read your own trips and the trips of devices shared with you in full'),
  ('trips', 'write_own', 'Create and change your own trips'),
  ('trips', 'delete_own', 'Delete your own trips'),
  ('geofences', 'read_own', 'Read your own geofences and those of people sharing a device with you in full'),
  ('geofences', 'write_own', 'Create and change your own geofences'),
  ('geofences', 'delete_own', 'Delete your own geofences')
on conflict (resource, action) do nothing;

insert into role_permissions (role_id, permission_id)
select 'role_user', p.id
from permissions p
where (p.resource, p.action) in (('trips', 'read_own'), ('trips', 'write_own'), ('trips', 'delete_own'),
  ('geofences', 'read_own'), ('geofences', 'write_own'), ('geofences', 'delete_own'))
on conflict do nothing;
