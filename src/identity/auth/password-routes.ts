import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../../platform/auth/hooks.js';
import { SESSION_AUTH, sessionOnly } from '../sessions/index.js';
import { errorResponses } from '../../platform/http/envelopes.js';
import { SessionErrors } from '../sessions/errors.js';
import { SignInErrors } from '../sign-in-throttle/service.js';
import { UserErrors } from '../users/errors.js';
import { PasswordChangeErrors, PasswordErrors } from './errors.js';
import { PASSWORD_CHANGED_MESSAGE, type PasswordResetService } from './password-reset.js';
import { ChangePasswordBody, PasswordChanged } from './schemas.js';

/** The signed-in user's password change (the reset by mailed token is in registration-routes.ts). */
export async function passwordRoutes(fastify: FastifyInstance, { passwordReset }: { passwordReset: PasswordResetService }): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.post('/v1/users/me/password', {
    config: { auth: SESSION_AUTH },
    onRequest: sessionOnly,
    schema: {
      tags: ['Users'],
      summary: 'Change your password',
      description:
        'A session token only (API keys: 403). The current password is checked as a sign-in checks it: a wrong one answers 400 and counts '
        + 'towards the account\'s sign-in lockout (429 once locked). The new one follows the rules of registration. Your other sessions, '
        + 'two-factor sign-ins still waiting and sign-ins on the OAuth provider\'s pages end; this session stays. With revoke_passkeys_and_keys, '
        + 'every passkey and API key of yours (but system keys) goes too, and the mail about the new password says so.',
      body: ChangePasswordBody,
      response: {
        200: PasswordChanged,
        ...errorResponses(
          SessionErrors.session_required, PasswordChangeErrors.wrong_current_password, PasswordChangeErrors.no_password,
          UserErrors.password_too_short, PasswordErrors.breached, SignInErrors.locked_out,
        ),
      },
    },
  }, async (request) => {
    const { other_sessions_ended } = await passwordReset.change(request, callerOf(request), request.body);
    return { message: PASSWORD_CHANGED_MESSAGE, other_sessions_ended };
  });
}
