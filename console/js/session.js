// @ts-check
import { post, session } from './api.js';
import { forgetBrowserTracker } from './browser-tracker.js';
import { t } from './i18n.js';

/**
 * The shell's session state, apart from the shell (app.js) so the pages it loads can use it without importing
 * the shell back: who is signed in and what they may do, and signing out. The token itself stays in api.js.
 */

/**
 * The signed-in user: id, name, locale and what they may do (GraphQL `me`, the caller's effective permissions).
 * @type {import('./types/console').Me}
 */
export const me = { userId: null, username: '', locale: null, roles: [], permissions: [], isSuperAdmin: false };

/**
 * Whether the user holds a permission, with the wildcards the service grants (`*:*`, `gps:*`).
 * @param {string} permission
 */
export function can(permission) {
  if (me.isSuperAdmin) return true;
  const [resource] = permission.split(':');
  return me.permissions.some((held) => held === permission || held === '*:*' || held === `${resource}:*`);
}

/**
 * Whether the user holds a tracking permission (`gps:write`: every device) or its own-scope twin (`gps:write_own`:
 * their own devices and, for reading, those shared with them); the API answers either in the caller's scope.
 * @param {string} permission
 */
export const canTrack = (permission) => can(permission) || can(`${permission}_own`);

/** @type {(message: string) => void} */
let onSignedOut = () => {};
/**
 * What the shell shows once signed out (its sign-in page with the message).
 * @param {(message: string) => void} handler
 */
export const whenSignedOut = (handler) => {
  onSignedOut = handler;
};

/** Back to the sign-in page, with `message` there (by default: signed out). */
export async function signOut(callApi = true, message = t('signin.signedOut')) {
  if (callApi && session.token) await post('/v1/auth/logout').catch(() => {});
  session.token = null;
  // The browser tracker's key is the user's: the next person signing in on this browser must not find it.
  forgetBrowserTracker();
  onSignedOut(message);
}
