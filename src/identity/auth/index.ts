/** What other modules use of password reset and change, of self-deletion (GraphQL's changePassword, deleteMyAccount) and of re-authentication. */
export { PASSWORD_CHANGED_MESSAGE, type PasswordResetService } from './password-reset.js';
export { ACCOUNT_DELETION_MESSAGE, type SelfDeletion } from './self-deletion.js';
export { RECENT_SIGN_IN_MS, type Reauthentication } from './reauthentication.js';
export { ReauthenticationErrors } from './errors.js';
