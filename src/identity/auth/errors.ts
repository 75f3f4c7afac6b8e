import { defineErrors } from '../../platform/http/errors.js';

export const LoginErrors = defineErrors('login', {
  invalid_credentials: [401, 'Invalid credentials'],
});

/** A wrong current password, wherever a user shows who they are again (reauthentication.ts); released under the password change's name. */
export const CurrentPasswordErrors = defineErrors('password_change', {
  wrong_current_password: [400, 'current_password is not the password of this account'],
});

export const AccountDeletionErrors = defineErrors('account_deletion', {
  current_password_required: [400, 'current_password is required: this account has a password'],
  sign_in_again: [403, 'This account has no password: sign in again, then delete it within 15 minutes of signing in'],
});

export const ReauthenticationErrors = defineErrors('auth', {
  reauthentication_required: [
    403,
    'Confirm it is you: give current_password, or sign in again (password, passkey or two-factor code) and retry within 15 minutes',
  ],
});
