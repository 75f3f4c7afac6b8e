import { defineErrors } from '../../platform/http/errors.js';

export const OAuthClientErrors = defineErrors('oauth_client', {
  not_found: [404, 'OAuth client not found'],
  invalid_redirect_uri: [
    400,
    'Each redirect URI must be an absolute https URL, or http on a loopback address, without a fragment',
  ],
  first_party_forbidden: [403, 'Only super admins may set is_first_party'],
  first_party_locked: [403, 'First-party clients can only be changed by a super admin'],
  first_party_immutable: [
    403,
    "A first-party client cannot be changed or deleted; register a new client and regenerate this one's secret to retire it",
  ],
  owner_super_admin_only: [403, 'Only super admins may set owner_user_id'],
  unknown_owner: [400, 'owner_user_id does not name an existing user'],
  owner_not_developer: [400, 'The owner_user_id owner must hold role_developer'],
  public_has_no_secret: [400, 'A public client has no secret; it authenticates with PKCE'],
  owner_required: [403, 'This credential does not belong to a user; name owner_user_id'],
});
