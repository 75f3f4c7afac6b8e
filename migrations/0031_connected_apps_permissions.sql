-- The connected-apps routes (GET and DELETE /v1/users/me/connected-apps) act on the caller's own account:
-- a session may; an API key or OAuth access token needs these (issue 36), given to every user so that a
-- user may put them on a key of their own.
insert into permissions (resource, action, description) values
  ('connected_apps', 'read', 'List the OAuth client apps connected to your account'),
  ('connected_apps', 'revoke', 'Disconnect an OAuth client app from your account')
on conflict (resource, action) do nothing;

insert into role_permissions (role_id, permission_id)
select 'role_user', p.id
from permissions p
where p.resource = 'connected_apps' and p.action in ('read', 'revoke')
on conflict do nothing;
