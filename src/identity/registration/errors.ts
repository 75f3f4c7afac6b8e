import { defineErrors } from '../../platform/http/errors.js';

export const RegistrationErrors = defineErrors('registration', {
  disabled: [400, 'Registration is disabled'],
  pending: [409, 'A registration for this email or username is already waiting for confirmation'],
});
