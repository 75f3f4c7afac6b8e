-- Reading events (issue 44): every device's (events:read) or those of the devices one may see (events:read_own),
-- granted to the roles holding gps:read and gps:read_own respectively, as 0042 and 0043 granted theirs.
insert into permissions (resource, action, description) values
  ('events', 'read', 'Read the events of every device (geofence enter, exit, dwell, ...)'),
  ('events', 'read_own', 'Read the events of your own devices and of devices shared with you')
on conflict (resource, action) do nothing;

insert into role_permissions (role_id, permission_id)
select rp.role_id, e.id
from role_permissions rp
join permissions g on g.id = rp.permission_id
join permissions e on e.resource = 'events' and e.action = g.action
where g.resource = 'gps' and g.action in ('read', 'read_own')
on conflict do nothing;
