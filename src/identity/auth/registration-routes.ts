import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { errorResponses, locateCreated } from '../../platform/http/envelopes.js';
import { MessageBody } from '../../platform/http/schemas.js';
import type { PasswordResetService } from './password-reset.js';
import { RESET_DONE_MESSAGE, RESET_REQUESTED_MESSAGE } from './password-reset.js';
import type { RegistrationService } from './registration.js';
import type { createEmailVerification } from './verify-email.js';
import { AuthResponse, CompleteResetBody, RegisterBody, Registered, ResetPasswordBody, TokenBody, VerifiedEmail } from './schemas.js';
import { BotCheckErrors } from '../../platform/bot-protection.js';
import { PasswordErrors, RegistrationErrors } from './errors.js';
import { AccountErrors, UserErrors } from '../users/errors.js';
import { MailErrors, MailedTokenErrors } from '../../platform/mail/token-mail.js';

const tags = ['Authentication'];

interface Options {
  registration: RegistrationService;
  passwordReset: PasswordResetService;
  verifyEmail: ReturnType<typeof createEmailVerification>;
}

/** Registration, email confirmation and password reset: public routes whose credential is a mailed token. */
export async function registrationRoutes(fastify: FastifyInstance, { registration, passwordReset, verifyEmail }: Options): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.post('/v1/auth/register', {
    schema: {
      tags,
      summary: 'Start a registration: mails a confirmation link valid 24 hours',
      description: 'Nothing is created until the link is followed. 400 when registration is disabled or the input breaks a rule; 409 when the email or username is taken or waiting for confirmation; 500 when the mail cannot be sent (nothing is kept).',
      body: RegisterBody,
      response: {
        200: Registered,
        ...errorResponses(
          BotCheckErrors.failed, BotCheckErrors.token_missing, RegistrationErrors.disabled, UserErrors.invalid_email,
          UserErrors.invalid_username, UserErrors.password_too_short, PasswordErrors.breached, RegistrationErrors.pending, UserErrors.email_registered,
          UserErrors.username_taken, MailErrors.not_sent,
        ),
      },
    },
  }, async (request) => registration.register(request, request.body));

  app.post('/v1/auth/register/verify', {
    schema: {
      tags,
      summary: 'Confirm a registration and sign in',
      description: 'Creates the user with an email account and the default role, and starts a session.',
      body: TokenBody,
      response: { 201: AuthResponse, ...errorResponses(MailedTokenErrors.invalid, UserErrors.email_registered, UserErrors.username_taken) },
    },
  }, async (request, reply) => {
    const signedIn = await registration.verifyAndSignIn(request, request.body.token);
    locateCreated(request, reply, `/v1/users/${signedIn.user_id}`);
    return signedIn;
  });

  app.post('/v1/auth/verify-email', {
    schema: {
      tags,
      summary: 'Confirm an emailed link: registration, email change or email link',
      description: 'Says which kind the token was; never starts a session.',
      body: TokenBody,
      response: { 200: VerifiedEmail, ...errorResponses(MailedTokenErrors.invalid, UserErrors.email_in_use, UserErrors.email_registered, UserErrors.username_taken, AccountErrors.email_already_linked) },
    },
  }, async (request) => verifyEmail(request, request.body.token));

  app.post('/v1/auth/reset-password', {
    schema: {
      tags,
      summary: 'Ask for a password reset link (valid 1 hour)',
      description: 'Always answers 200 with the same message, whether or not the address has an account.',
      body: ResetPasswordBody,
      response: { 200: MessageBody, ...errorResponses(BotCheckErrors.failed, BotCheckErrors.token_missing, UserErrors.invalid_email) },
    },
  }, async (request) => {
    await passwordReset.request(request, request.body);
    return { message: RESET_REQUESTED_MESSAGE };
  });

  app.post('/v1/auth/reset-password/complete', {
    schema: {
      tags,
      summary: 'Set a new password with a reset token',
      description: 'The token works once; every session of the user ends. With revoke_passkeys_and_keys, every passkey and API key of the user '
        + '(but system keys) goes too, and the mail about the new password says so.',
      body: CompleteResetBody,
      response: {
        200: MessageBody,
        ...errorResponses(BotCheckErrors.failed, BotCheckErrors.token_missing, MailedTokenErrors.invalid, UserErrors.password_too_short, PasswordErrors.breached),
      },
    },
  }, async (request) => {
    await passwordReset.complete(request, request.body);
    return { message: RESET_DONE_MESSAGE };
  });

  for (const path of ['/v1/auth/signin', '/v1/auth/validate']) {
    app.post(path, {
      schema: { tags, summary: 'Not implemented (social sign-in uses GraphQL oauthSignin and POST /v1/users/oauth)', response: { 501: MessageBody } },
    }, async (_request, reply) => reply.status(501).send({ message: 'Not implemented' }));
  }
}
