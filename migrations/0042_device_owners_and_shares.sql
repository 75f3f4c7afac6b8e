-- Every device has an owner (issue 43): the user who created it, or the owner of the API key it reports with.
-- Devices made before this get the owner of their linked key, else the first super admin (by sign-up date).
-- A purged user's devices stay, without owner: holders of the global permissions still see and manage them.
alter table devices add column owner_id uuid references users (id) on delete set null;

update devices d set owner_id = coalesce(
  (select k.user_id from api_keys k where k.id = d.api_key_id),
  (select u.id from users u
     join user_roles ur on ur.user_id = u.id
     join roles r on r.id = ur.role_id and r.is_super_admin
   where u.deleted_at is null
   order by u.created_at, u.id
   limit 1));

create index devices_owner on devices (owner_id);

-- A device shared by its owner with a user or a group; device_id null shares every device of the owner.
create table device_shares (
  id uuid primary key default gen_random_uuid(),
  owner_id uuid not null references users (id) on delete cascade,
  device_id uuid references devices (id) on delete cascade,
  user_id uuid references users (id) on delete cascade,
  group_id uuid references groups (id) on delete cascade,
  -- live: the current position; history: live and the points of the last history_days days (null: all);
  -- full: history and the device's trips, geofences and exports.
  level text not null check (level in ('live', 'history', 'full')),
  history_days integer check (history_days between 1 and 36500),
  expires_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check ((user_id is null) <> (group_id is null)),
  check (user_id is distinct from owner_id)
);

-- One share per device (or per "all devices") and grantee: a second one is changed, not added.
create unique index device_shares_user_device on device_shares (device_id, user_id) where device_id is not null and user_id is not null;
create unique index device_shares_group_device on device_shares (device_id, group_id) where device_id is not null and group_id is not null;
create unique index device_shares_user_all on device_shares (owner_id, user_id) where device_id is null and user_id is not null;
create unique index device_shares_group_all on device_shares (owner_id, group_id) where device_id is null and group_id is not null;
create index device_shares_user on device_shares (user_id) where user_id is not null;
create index device_shares_group on device_shares (group_id) where group_id is not null;

-- Self-service tracking (issue 43): a user acts on the devices they own and those shared with them. These
-- own-scope permissions go to the default role; the global ones (gps:read, ...) keep reaching every device.
insert into permissions (resource, action, description) values
  ('gps', 'read_own', 'Read the points of your own devices and of devices shared with you'),
  ('gps', 'write_own', 'Send and import points to your own devices'),
  ('gps', 'delete_own', 'Delete points of your own devices'),
  ('devices', 'read_own', 'Read your own devices and devices shared with you'),
  ('devices', 'write_own', 'Create and change your own devices, share them and hand them over'),
  ('devices', 'delete_own', 'Delete your own devices')
on conflict (resource, action) do nothing;

insert into role_permissions (role_id, permission_id)
select 'role_user', p.id
from permissions p
where (p.resource, p.action) in (('gps', 'read_own'), ('gps', 'write_own'), ('gps', 'delete_own'),
  ('devices', 'read_own'), ('devices', 'write_own'), ('devices', 'delete_own'))
on conflict do nothing;

insert into system_config (key, value, description) values
  ('tracking.self_service', 'true', 'Every user may track their own devices and see those shared with them (false: only holders of the global permissions track)')
on conflict (key) do nothing;
