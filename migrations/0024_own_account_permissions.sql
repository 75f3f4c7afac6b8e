-- Credentials that act for a user carry what they may do (issue 36). Routes on the caller's own account
-- (OAuth clients, the own activity log and reports, the data export, streaming integrations, signing out
-- of apps) let a session through, the person themselves; an API key or OAuth access token needs one of
-- these permissions. They go to the default roles, so that a user may put them on a key of their own:
-- a key never holds a permission its owner lacks.
insert into permissions (resource, action, description) values
  ('oauth_clients', 'read', 'Read your own OAuth clients'),
  ('oauth_clients', 'write', 'Register and change your own OAuth clients, regenerate their secrets'),
  ('oauth_clients', 'delete', 'Delete your own OAuth clients'),
  ('audit', 'read_own', 'Read your own activity log and your reports'),
  ('audit', 'report_own', 'Report an event of your own activity log'),
  ('export', 'read', 'Download your personal data export and its log'),
  ('integrations', 'read', 'Read your streaming-platform integrations'),
  ('integrations', 'write', 'Connect, refresh, change and disconnect your streaming-platform integrations'),
  ('connected_apps', 'sign_out', 'Sign yourself out of one or every OAuth client app')
on conflict (resource, action) do nothing;

insert into role_permissions (role_id, permission_id)
select grants.role_id, p.id
from (values
  ('role_developer', 'oauth_clients', 'read'), ('role_developer', 'oauth_clients', 'write'),
  ('role_developer', 'oauth_clients', 'delete'),
  ('role_user', 'audit', 'read_own'), ('role_user', 'audit', 'report_own'), ('role_user', 'export', 'read'),
  ('role_user', 'integrations', 'read'), ('role_user', 'integrations', 'write'),
  ('role_user', 'connected_apps', 'sign_out')
) as grants (role_id, resource, action)
join permissions p on p.resource = grants.resource and p.action = grants.action
on conflict do nothing;
