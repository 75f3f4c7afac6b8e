-- Self-service tracking (issue 43): a registered user connects their own phone, which reports with an API key of
-- theirs. The User role may therefore make, list and revoke its own keys. A key never exceeds its owner (its
-- scopes must be among the owner's permissions, so a User's key reaches only their own and shared devices), and
-- only super admins see or manage other users' keys: holding these gives no power over anyone else.
insert into role_permissions (role_id, permission_id)
select 'role_user', p.id
from permissions p
where (p.resource, p.action) in (('api_keys', 'read'), ('api_keys', 'write'), ('api_keys', 'delete'))
on conflict do nothing;
