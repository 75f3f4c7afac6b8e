import { defineErrors } from '../../platform/http/errors.js';

export const OauthSignInErrors = defineErrors('oauth_sign_in', {
  unknown_provider: [400, 'oauthProvider is not a known OAuth provider'],
  provider_disabled: [400, 'Sign-in through this provider is disabled'],
  registration_disabled: [400, 'Registration through this provider is disabled'],
  name_empty: [400, 'name must not be empty'],
  provider_id_empty: [400, 'oauthProviderId must not be empty'],
  system_key_only: [401, 'This endpoint requires the system API key'],
});

export const UserErrors = defineErrors('user', {
  deleted: [403, 'This user account has been deleted'],
  not_scheduled_for_deletion: [400, 'The user is not scheduled for deletion'],
  not_found: [404, 'User not found'],
  email_in_use: [409, 'Email is already in use'],
  no_email_account: [
    400,
    'email can only be changed for accounts created with email; this user has no email/password account',
  ],
  sign_in_beyond_caller: [403, 'You cannot manage the sign-in of a user who holds permissions you do not hold'],
  email_registered: [409, 'Email is already registered'],
  username_taken: [409, 'Username is already taken', { constraint: 'users_username_key' }],
  own_email_needs_confirmation: [
    400,
    'To change your own email, use POST /v1/users/{id}/email/request-change: the new address must be confirmed first',
  ],
  avatars_disabled: [400, 'avatar_url cannot be set while avatars_enabled is false'],
  no_primary_account: [400, 'The user has no primary platform account to carry avatar_url'],
  credential_without_user: [404, 'This credential does not belong to a user'],
  unsupported_locale: [400, 'locale is not a supported locale'],
  last_super_admin: [409, 'The last super admin cannot be deleted'],
  email_lookup_not_own: [403, 'You may only look up your own email address'],
  email_not_found: [404, 'No user has this email address'],
  password_too_short: [400, 'The password is too short'],
  invalid_username: [400, 'username must be 3-30 characters of letters, digits and underscores'],
  invalid_email: [400, 'email is not a valid email address'],
  invalid_url: [400, 'The URL must be an http or https URL'],
  email_of_deleted_user: [409, 'This email belongs to a deleted user; choose another address'],
  last_super_admin_role: [409, 'The last super admin cannot lose that role'],
});

export const EmailChangeErrors = defineErrors('email_change', {
  no_email_account: [
    400,
    'Email change is only for accounts created with email; this user has no email/password account',
  ],
  same_address: [400, 'email is already the address of this account'],
  none_pending: [404, 'No pending email change'],
});

export const AccountErrors = defineErrors('account', {
  not_found: [404, 'Platform account not found'],
  email_already_linked: [409, 'User already has an email account'],
  unlink_email: [400, 'The email account cannot be unlinked'],
  unlink_last: [400, 'The last remaining account cannot be unlinked'],
  unlink_primary: [400, 'The primary account cannot be unlinked; make another account primary first'],
  email_sign_in_disabled: [400, 'Email sign-in is disabled'],
  no_email_link_pending: [404, 'No pending email link'],
});
