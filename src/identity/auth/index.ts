/** What other modules use of password reset and change, and of self-deletion (GraphQL's changePassword, deleteMyAccount). */
export { PASSWORD_CHANGED_MESSAGE, type PasswordResetService } from './password-reset.js';
export { SESSION_AUTH, sessionOnly } from './session-only.js';
export { ACCOUNT_DELETION_MESSAGE, type SelfDeletion } from './self-deletion.js';
export { RECENT_SIGN_IN_MS, type Reauthentication } from './reauthentication.js';
export { ReauthenticationErrors } from './errors.js';
