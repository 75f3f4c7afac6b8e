import type { FastifyRequest } from 'fastify';
import { hashToken } from '../../platform/auth/tokens.js';

import type { AccountTokenPurpose } from '../../platform/db/schema/index.js';
import { linkBaseUrl, MailedTokenErrors } from '../../platform/mail/token-mail.js';
import type { RegistrationService } from './service.js';

interface Deps {
  registration: Pick<RegistrationService, 'verifyWithoutSession'>;
  purposeOf: (tokenHash: string) => Promise<AccountTokenPurpose | undefined>;
  completeEmailChange: (request: FastifyRequest, token: string) => Promise<{ userId: string }>;
  completeEmailLink: (request: FastifyRequest, token: string) => Promise<{ userId: string }>;
}

/**
 * POST /v1/auth/verify-email: the one landing point of every mailed
 * confirmation link. It finds out what the token confirms (a registration, an
 * email change or an email link), completes it, and says which; it never signs in.
 * `redirect_url` is where a front end (at FRONTEND_URL, else PUBLIC_URL) sends the user next.
 */
export function createEmailVerification(deps: Deps) {
  return async function verifyEmail(request: FastifyRequest, token: string) {
    const base = linkBaseUrl(request);
    const registered = await deps.registration.verifyWithoutSession(request, token);
    if (registered) {
      return result(
        'registration',
        registered.userId,
        'Email confirmed; your account is ready and you can sign in',
        `${base}/login`,
      );
    }
    switch (await deps.purposeOf(hashToken(token))) {
      case 'email_change': {
        const { userId } = await deps.completeEmailChange(request, token);
        return result('email_change', userId, 'Your new email address is confirmed', `${base}/account`);
      }
      case 'email_link': {
        const { userId } = await deps.completeEmailLink(request, token);
        return result('email_link', userId, 'Email sign-in has been added to your account', `${base}/account`);
      }
      default:
        throw MailedTokenErrors.invalid();
    }
  };
}

function result(
  verificationType: 'registration' | 'email_change' | 'email_link',
  userId: string,
  message: string,
  redirectUrl: string,
) {
  return { success: true, message, verification_type: verificationType, user_id: userId, redirect_url: redirectUrl };
}

export type EmailVerification = ReturnType<typeof createEmailVerification>;
