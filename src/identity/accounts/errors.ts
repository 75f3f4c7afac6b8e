import { defineErrors } from '../../platform/http/errors.js';

export const AccountErrors = defineErrors('account', {
  not_found: [404, 'Platform account not found'],
  email_already_linked: [409, 'User already has an email account'],
  unlink_email: [400, 'The email account cannot be unlinked'],
  unlink_last: [400, 'The last remaining account cannot be unlinked'],
  unlink_primary: [400, 'The primary account cannot be unlinked; make another account primary first'],
  email_sign_in_disabled: [400, 'Email sign-in is disabled'],
  no_email_link_pending: [404, 'No pending email link'],
});
