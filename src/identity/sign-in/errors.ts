import { defineErrors } from '../../platform/http/errors.js';

export const LoginErrors = defineErrors('login', {
  invalid_credentials: [401, 'Invalid credentials'],
});

/** A wrong current password, wherever a user shows who they are again (reauthentication.ts); released under the password change's name. */
export const CurrentPasswordErrors = defineErrors('password_change', {
  wrong_current_password: [400, 'current_password is not the password of this account'],
});

export const ReauthenticationErrors = defineErrors('auth', {
  reauthentication_required: [
    403,
    'Confirm it is you: give current_password, or sign in again (password, passkey or two-factor code) and retry within 15 minutes',
  ],
});
