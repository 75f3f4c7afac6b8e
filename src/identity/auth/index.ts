/** What other modules use of self-deletion (GraphQL's deleteMyAccount) and of re-authentication. */
export { ACCOUNT_DELETION_MESSAGE, type SelfDeletion } from './self-deletion.js';
export { RECENT_SIGN_IN_MS, type Reauthentication } from './reauthentication.js';
export { ReauthenticationErrors } from './errors.js';
