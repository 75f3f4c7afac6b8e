import { Type, type Static } from 'typebox';
import { Body, DateTime, named, Nullable, Uuid } from '../../platform/http/schemas.js';

const GROUP_ID = '5f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0';
const USER_ID = '0b8e9f10-1a2b-4c3d-9e4f-5a6b7c8d9e0f';
const INVITER_ID = '7d6c5b4a-3f2e-4d1c-8b0a-9f8e7d6c5b4a';

export const Group = named(
  'Group',
  Type.Object(
    {
      id: Uuid,
      name: Type.String(),
      description: Nullable(Type.String()),
      created_at: DateTime,
      updated_at: DateTime,
      member_count: Type.Integer({ minimum: 1 }),
      is_admin: Type.Boolean({ description: 'Whether you administer the group' }),
    },
    {
      examples: [
        {
          id: GROUP_ID,
          name: 'Family',
          description: 'Where everybody is on the way home',
          created_at: '2026-11-25T09:30:00.000Z',
          updated_at: '2026-11-25T09:30:00.000Z',
          member_count: 4,
          is_admin: true,
        },
      ],
    },
  ),
);

export const GroupMember = named(
  'GroupMember',
  Type.Object(
    {
      user_id: Uuid,
      username: Type.String(),
      is_admin: Type.Boolean(),
      joined_at: DateTime,
    },
    { examples: [{ user_id: USER_ID, username: 'anna', is_admin: false, joined_at: '2026-11-25T09:30:00.000Z' }] },
  ),
);

export const InvitationStatus = Type.Union(
  [Type.Literal('pending'), Type.Literal('accepted'), Type.Literal('declined'), Type.Literal('expired')],
  { description: 'pending until answered or past expires_at (14 days after it was sent)' },
);

/** An invitation as the group's admins see it: the username or the address they invited, nothing more. */
export const GroupInvitation = named(
  'GroupInvitation',
  Type.Object(
    {
      id: Uuid,
      group_id: Uuid,
      username: Nullable(Type.String({ description: 'The invited username (an invitation by username)' })),
      email: Nullable(
        Type.String({
          description:
            'The invited address (an invitation by email); whether it belongs to a registered user is not told',
        }),
      ),
      invited_by: Nullable(Uuid),
      created_at: DateTime,
      expires_at: DateTime,
      status: InvitationStatus,
      answered_at: Nullable(DateTime),
    },
    {
      examples: [
        {
          id: '3c9d1e2f-4a5b-4c6d-8e7f-0a1b2c3d4e5f',
          group_id: GROUP_ID,
          username: null,
          email: 'grandma@example.org',
          invited_by: INVITER_ID,
          created_at: '2026-11-25T09:30:00.000Z',
          expires_at: '2026-12-09T09:30:00.000Z',
          status: 'pending',
          answered_at: null,
        },
      ],
    },
  ),
);

/** An invitation as its invitee sees it: which group, and who invited them. */
export const MyInvitation = named(
  'MyInvitation',
  Type.Object(
    {
      id: Uuid,
      group_id: Uuid,
      group_name: Type.String(),
      invited_by: Nullable(Uuid),
      invited_by_username: Nullable(Type.String({ description: 'null once the inviter is gone' })),
      created_at: DateTime,
      expires_at: DateTime,
      status: InvitationStatus,
      answered_at: Nullable(DateTime),
    },
    {
      examples: [
        {
          id: '3c9d1e2f-4a5b-4c6d-8e7f-0a1b2c3d4e5f',
          group_id: GROUP_ID,
          group_name: 'Family',
          invited_by: INVITER_ID,
          invited_by_username: 'peter',
          created_at: '2026-11-25T09:30:00.000Z',
          expires_at: '2026-12-09T09:30:00.000Z',
          status: 'pending',
          answered_at: null,
        },
      ],
    },
  ),
);

const Name = Type.String({ minLength: 1, maxLength: 100 });
const Description = Nullable(Type.String({ maxLength: 1000 }));

export const CreateGroupBody = Body(
  { name: Name, description: Type.Optional(Description) },
  { example: { name: 'Family', description: 'Where everybody is on the way home' } },
);
export const UpdateGroupBody = Body(
  { name: Type.Optional(Name), description: Type.Optional(Description) },
  { atLeastOne: true, example: { name: 'The Millers' } },
);
export const UpdateMemberBody = Body(
  { is_admin: Type.Boolean({ description: 'true: the member administers the group too' }) },
  { example: { is_admin: true } },
);
export const InviteBody = Body(
  {
    username: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    email: Type.Optional(Type.String({ minLength: 3, maxLength: 320 })),
  },
  { example: { email: 'grandma@example.org' } },
);

export const GroupParams = Type.Object({ id: Uuid });
export const MemberParams = Type.Object({ id: Uuid, user_id: Uuid });
export const GroupInvitationParams = Type.Object({ id: Uuid, invitation_id: Uuid });

export type CreateGroupInput = Static<typeof CreateGroupBody>;
export type UpdateGroupInput = Static<typeof UpdateGroupBody>;
export type InviteInput = Static<typeof InviteBody>;
