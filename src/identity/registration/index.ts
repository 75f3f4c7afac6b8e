/** What other modules use of registration beside the service: the confirmation of every mailed link (the link pages post to it). */
export type { EmailVerification } from './verify-email.js';
