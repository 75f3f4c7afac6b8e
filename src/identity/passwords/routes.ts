import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../../platform/auth/hooks.js';
import { SESSION_AUTH, sessionOnly } from '../sessions/index.js';
import { errorResponses } from '../../platform/http/envelopes.js';
import { MessageBody } from '../../platform/http/schemas.js';
import { BotCheckErrors } from '../../platform/bot-protection.js';
import { MailedTokenErrors } from '../../platform/mail/token-mail.js';
import { SessionErrors } from '../sessions/errors.js';
import { SignInErrors } from '../sign-in-throttle/service.js';
import { UserErrors } from '../users/errors.js';
import { CurrentPasswordErrors } from '../sign-in/errors.js';
import { PasswordChangeErrors, PasswordErrors } from './errors.js';
import {
  PASSWORD_CHANGED_MESSAGE,
  RESET_DONE_MESSAGE,
  RESET_REQUESTED_MESSAGE,
  type PasswordResetService,
} from './service.js';
import { ChangePasswordBody, CompleteResetBody, PasswordChanged, ResetPasswordBody } from './schemas.js';

/** The signed-in user's password change. */
export async function passwordChangeRoutes(
  fastify: FastifyInstance,
  { passwordReset }: { passwordReset: PasswordResetService },
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/v1/users/me/password',
    {
      config: { auth: SESSION_AUTH },
      onRequest: sessionOnly,
      schema: {
        tags: ['Users'],
        summary: 'Change your password',
        description:
          'A session token only (API keys: 403). The current password is checked as a sign-in checks it: a wrong one answers 400 and counts ' +
          "towards the account's sign-in lockout (429 once locked). The new one follows the rules of registration. Your other sessions, " +
          "two-factor sign-ins still waiting and sign-ins on the OAuth provider's pages end; this session stays. With revoke_passkeys_and_keys, " +
          'every passkey and API key of yours (but system keys) goes too, and the mail about the new password says so.',
        body: ChangePasswordBody,
        response: {
          200: PasswordChanged,
          ...errorResponses(
            SessionErrors.session_required,
            CurrentPasswordErrors.wrong_current_password,
            PasswordChangeErrors.no_password,
            UserErrors.password_too_short,
            PasswordErrors.breached,
            SignInErrors.locked_out,
          ),
        },
      },
    },
    async (request) => {
      const { other_sessions_ended } = await passwordReset.change(request, callerOf(request), request.body);
      return { message: PASSWORD_CHANGED_MESSAGE, other_sessions_ended };
    },
  );
}

/**
 * The reset by a mailed token: public routes. A plugin of its own, registered after registration's routes as
 * before, so the OpenAPI document keeps its order.
 */
export async function passwordResetRoutes(
  fastify: FastifyInstance,
  { passwordReset }: { passwordReset: PasswordResetService },
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Authentication'];

  app.post(
    '/v1/auth/reset-password',
    {
      schema: {
        tags,
        summary: 'Ask for a password reset link (valid 1 hour)',
        description: 'Always answers 200 with the same message, whether or not the address has an account.',
        body: ResetPasswordBody,
        response: {
          200: MessageBody,
          ...errorResponses(
            BotCheckErrors.failed,
            BotCheckErrors.unavailable,
            BotCheckErrors.token_missing,
            UserErrors.invalid_email,
          ),
        },
      },
    },
    async (request) => {
      await passwordReset.request(request, request.body);
      return { message: RESET_REQUESTED_MESSAGE };
    },
  );

  app.post(
    '/v1/auth/reset-password/complete',
    {
      schema: {
        tags,
        summary: 'Set a new password with a reset token',
        description:
          'The token works once; every session of the user ends. With revoke_passkeys_and_keys, every passkey and API key of the user ' +
          '(but system keys) goes too, and the mail about the new password says so.',
        body: CompleteResetBody,
        response: {
          200: MessageBody,
          ...errorResponses(
            BotCheckErrors.failed,
            BotCheckErrors.unavailable,
            BotCheckErrors.token_missing,
            MailedTokenErrors.invalid,
            UserErrors.password_too_short,
            PasswordErrors.breached,
          ),
        },
      },
    },
    async (request) => {
      await passwordReset.complete(request, request.body);
      return { message: RESET_DONE_MESSAGE };
    },
  );
}
