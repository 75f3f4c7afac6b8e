/** What other modules use of passwords beside the service: registration checks a new password against breaches too. */
export type { BreachedPasswordCheck } from './breached-passwords.js';
