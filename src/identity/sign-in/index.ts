/** What other modules use of re-authentication (API keys, passkeys, the password change, self-deletion). */
export { RECENT_SIGN_IN_MS, type Reauthentication } from './reauthentication.js';
export { ReauthenticationErrors } from './errors.js';
