import { defineErrors } from '../../platform/http/errors.js';

export const GroupErrors = defineErrors('group', {
  /** Also a group the caller is not a member of: whether it exists is not told. */
  not_found: [404, 'Group not found'],
  admin_required: [403, 'Only an admin of the group can do this'],
  name_required: [400, 'name must not be blank'],
  too_many_groups: [409, 'A user belongs to at most 100 groups'],
  last_admin: [409, 'The last admin cannot leave while other members remain; make another member admin first'],
  member_not_found: [404, 'Not a member of this group'],
  already_member: [409, 'The user is already a member of this group'],
  invitee_not_found: [404, 'No user has this username'],
  invitee_required: [400, 'Give exactly one of username and email'],
  invitation_pending: [
    409,
    'An invitation to this group is already pending for this invitee',
    {
      constraint: 'group_invitations_pending_user',
    },
  ],
  invitation_pending_email: [
    409,
    'An invitation to this group is already pending for this address',
    {
      constraint: 'group_invitations_pending_email',
    },
  ],
  too_many_invitations: [409, 'A group has at most 50 pending invitations; withdraw some first'],
  /** Also an invitation to somebody else: whether it exists is not told. */
  invitation_not_found: [404, 'Invitation not found'],
  invitation_answered: [409, 'The invitation was already answered'],
  invitation_expired: [409, 'The invitation has expired; ask for a new one'],
});
