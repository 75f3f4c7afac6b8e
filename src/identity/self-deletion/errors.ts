import { defineErrors } from '../../platform/http/errors.js';

export const AccountDeletionErrors = defineErrors('account_deletion', {
  current_password_required: [400, 'current_password is required: this account has a password'],
  sign_in_again: [403, 'This account has no password: sign in again, then delete it within 15 minutes of signing in'],
});
