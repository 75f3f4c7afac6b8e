/** What other modules use of sessions beside the service: the guard of routes a person uses on their own account. */
export { SESSION_AUTH, sessionOnly } from './session-only.js';
