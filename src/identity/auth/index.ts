/** What other modules use of password reset and change (GraphQL's changePassword). */
export { PASSWORD_CHANGED_MESSAGE, type PasswordResetService } from './password-reset.js';
export { SESSION_AUTH, sessionOnly } from './session-only.js';
