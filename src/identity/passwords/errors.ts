import { defineErrors } from '../../platform/http/errors.js';

/** The password change's own refusal; a wrong current password is the sign-in module's `password_change.wrong_current_password`. */
export const PasswordChangeErrors = defineErrors('password_change', {
  no_password: [400, 'This account has no password to change; set one with a password reset of its email account'],
});

export const PasswordErrors = defineErrors('password', {
  breached: [400, 'The password appears in known data breaches; choose another password'],
});
