import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { errorResponses, locateCreated } from '../../platform/http/envelopes.js';
import { MessageBody } from '../../platform/http/schemas.js';
import type { RegistrationService } from './service.js';
import type { EmailVerification } from './verify-email.js';
import { AuthResponse } from '../sign-in/schemas.js';
import { RegisterBody, Registered, TokenBody, VerifiedEmail } from './schemas.js';
import { BotCheckErrors } from '../../platform/bot-protection.js';
import { RegistrationErrors } from './errors.js';
import { PasswordErrors } from '../passwords/errors.js';
import { AccountErrors, UserErrors } from '../users/errors.js';
import { MailErrors, MailedTokenErrors } from '../../platform/mail/token-mail.js';

const tags = ['Authentication'];

interface Options {
  registration: RegistrationService;
  verifyEmail: EmailVerification;
}

/** Registration and email confirmation: public routes whose credential is a mailed token. */
export async function registrationRoutes(
  fastify: FastifyInstance,
  { registration, verifyEmail }: Options,
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/v1/auth/register',
    {
      schema: {
        tags,
        summary: 'Start a registration: mails a confirmation link valid 24 hours',
        description:
          'Nothing is created until the link is followed. 400 when registration is disabled or the input breaks a rule; 409 when the email or username is taken or waiting for confirmation; 500 when the mail cannot be sent (nothing is kept).',
        body: RegisterBody,
        response: {
          200: Registered,
          ...errorResponses(
            BotCheckErrors.failed,
            BotCheckErrors.unavailable,
            BotCheckErrors.token_missing,
            RegistrationErrors.disabled,
            UserErrors.invalid_email,
            UserErrors.invalid_username,
            UserErrors.password_too_short,
            PasswordErrors.breached,
            RegistrationErrors.pending,
            UserErrors.email_registered,
            UserErrors.username_taken,
            MailErrors.not_sent,
          ),
        },
      },
    },
    async (request) => registration.register(request, request.body),
  );

  app.post(
    '/v1/auth/register/verify',
    {
      schema: {
        tags,
        summary: 'Confirm a registration and sign in',
        description: 'Creates the user with an email account and the default role, and starts a session.',
        body: TokenBody,
        response: {
          201: AuthResponse,
          ...errorResponses(MailedTokenErrors.invalid, UserErrors.email_registered, UserErrors.username_taken),
        },
      },
    },
    async (request, reply) => {
      const signedIn = await registration.verifyAndSignIn(request, request.body.token);
      locateCreated(request, reply, `/v1/users/${signedIn.user_id}`);
      return signedIn;
    },
  );

  app.post(
    '/v1/auth/verify-email',
    {
      schema: {
        tags,
        summary: 'Confirm an emailed link: registration, email change or email link',
        description: 'Says which kind the token was; never starts a session.',
        body: TokenBody,
        response: {
          200: VerifiedEmail,
          ...errorResponses(
            MailedTokenErrors.invalid,
            UserErrors.email_in_use,
            UserErrors.email_registered,
            UserErrors.username_taken,
            AccountErrors.email_already_linked,
          ),
        },
      },
    },
    async (request) => verifyEmail(request, request.body.token),
  );
}
