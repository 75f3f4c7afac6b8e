import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import { publicBaseUrl } from '../http/envelopes.js';
import { defineErrors } from '../http/errors.js';
import type { Mailer } from './mailer.js';
import { tokenLink, type MailMessage } from './messages.js';

/**
 * Pages mailed links open: this service's own (under PUBLIC_URL), or a front end's at FRONTEND_URL,
 * which posts the token to the API.
 */
export const VERIFY_EMAIL_PATH = '/verify-email';
export const RESET_PASSWORD_PATH = '/reset-password';

/** A mailed token (registration, reset, email change or link) that is unknown, used or expired. */
export const MailedTokenErrors = defineErrors('mailed_token', {
  invalid: [400, 'Invalid or expired token'],
});

export const MailErrors = defineErrors('mail', {
  not_sent: [500, 'The verification email could not be sent; please try again later'],
});

/**
 * Where mailed links (and verify-email's `redirect_url`) lead: FRONTEND_URL, else PUBLIC_URL. With
 * SMTP_URL the configuration requires PUBLIC_URL, so real mail never takes its host from the
 * client-controlled Host header; only the local outbox (no SMTP) falls back to the request's origin.
 */
export function linkBaseUrl(request: FastifyRequest): string {
  return request.server.config.frontendUrl ?? publicBaseUrl(request);
}

/** The link a mail carries. */
export function mailLink(request: FastifyRequest, path: string, token: string): string {
  return tokenLink(linkBaseUrl(request), path, token);
}

/**
 * Sends a mail whose token is already stored. Mail goes out after the token's
 * transaction committed (an open transaction would hold the embedded database's
 * only connection during SMTP); when sending fails, `undo` removes the token and
 * the request fails with 500, so nothing waits on a mail that never left.
 */
export async function sendOrUndo(
  deps: { mailer: Pick<Mailer, 'send'>; log: FastifyBaseLogger },
  to: string,
  message: MailMessage,
  undo: () => Promise<unknown>,
): Promise<void> {
  try {
    await deps.mailer.send(to, message);
  } catch (err) {
    deps.log.error({ err, subject: message.subject }, 'could not send a verification mail');
    await undo();
    throw MailErrors.not_sent();
  }
}
