-- Groups (issue 43): a family, a crew, a team. A user creates one and is its first admin; admins invite people
-- by username or email, the invitee accepts or declines; members leave, admins remove. Devices are shared with a
-- group (device_shares.group_id, migration 0042).
create table groups (
  id uuid primary key default gen_random_uuid(),
  name text not null check (char_length(name) between 1 and 100),
  description text check (char_length(description) <= 1000),
  created_by uuid references users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create table group_members (
  group_id uuid not null references groups (id) on delete cascade,
  user_id uuid not null references users (id) on delete cascade,
  is_admin boolean not null default false,
  joined_at timestamptz not null,
  primary key (group_id, user_id)
);
-- The groups of a user (GET /v1/groups, and the sharing rule's groupIdsOf on every visibility check).
create index group_members_user on group_members (user_id);

-- An invitation names a registered user (user_id: invited by username, or by the address of a registered
-- user) or, for an address nobody has registered, only the address; it becomes the user's when someone
-- registers with that address and confirms it. email is also kept for an invitation by the address of a
-- registered user, so the group's admins see what they typed and never who it belongs to. Pending until
-- answered, withdrawn (deleted) or past expires_at (then 'expired', written when next looked at).
create table group_invitations (
  id uuid primary key default gen_random_uuid(),
  group_id uuid not null references groups (id) on delete cascade,
  invited_by uuid references users (id) on delete set null,
  user_id uuid references users (id) on delete cascade,
  email text check (email = lower(btrim(email))),
  created_at timestamptz not null,
  expires_at timestamptz not null,
  answered_at timestamptz,
  status text not null default 'pending' check (status in ('pending', 'accepted', 'declined', 'expired')),
  check (user_id is not null or email is not null),
  check (expires_at > created_at),
  check ((status in ('accepted', 'declined')) = (answered_at is not null))
);
-- At most one pending invitation of a group per invited username and per invited address. (A user invited by
-- username and also by their address may hold two: telling the inviter otherwise would say whose address it is.)
create unique index group_invitations_pending_user on group_invitations (group_id, user_id)
  where status = 'pending' and email is null;
create unique index group_invitations_pending_email on group_invitations (group_id, email)
  where status = 'pending' and email is not null;
-- A user's invitations (GET /v1/invitations), and an address's when its owner registers.
create index group_invitations_user on group_invitations (user_id) where user_id is not null;
create index group_invitations_email on group_invitations (email) where email is not null and user_id is null;

-- The groups routes act on the caller's own account: a session may; an API key or OAuth access token needs
-- these (as for migration 0024), given to every user so that a user may put them on a key of their own.
insert into permissions (resource, action, description) values
  ('groups', 'read', 'Read your groups, their members and your invitations'),
  ('groups', 'write', 'Create, change and leave groups, invite people and answer your invitations')
on conflict (resource, action) do nothing;

insert into role_permissions (role_id, permission_id)
select 'role_user', p.id
from permissions p
where p.resource = 'groups' and p.action in ('read', 'write')
on conflict do nothing;
