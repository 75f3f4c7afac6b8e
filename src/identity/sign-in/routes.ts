import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { errorResponses } from '../../platform/http/envelopes.js';
import { MessageBody } from '../../platform/http/schemas.js';
import { AuthResponse, LoginBody } from './schemas.js';
import type { SignInService } from './service.js';
import { BotCheckErrors } from '../../platform/bot-protection.js';
import { LoginErrors } from './errors.js';
import { SignInErrors } from '../sign-in-throttle/service.js';
import { AuthErrors } from '../../platform/http/errors.js';
import { BannedErrors } from '../bans/errors.js';

const tags = ['Authentication'];

export async function signInRoutes(fastify: FastifyInstance, { signIn }: { signIn: SignInService }): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/v1/auth/login',
    {
      schema: {
        tags,
        summary: 'Sign in with username or email and password',
        description: 'Starts a 30-day session. Wrong or unknown credentials answer 401 without telling which.',
        body: LoginBody,
        response: {
          200: AuthResponse,
          ...errorResponses(
            BotCheckErrors.failed,
            BotCheckErrors.unavailable,
            BotCheckErrors.token_missing,
            LoginErrors.invalid_credentials,
            BannedErrors.banned,
            SignInErrors.locked_out,
          ),
        },
      },
    },
    async (request) => signIn.login(request, request.body),
  );

  app.post(
    '/v1/auth/logout',
    {
      schema: {
        tags,
        summary: 'End the session whose token is the bearer credential',
        security: [{ bearer: [] }],
        response: { 200: MessageBody, ...errorResponses(AuthErrors.unauthorized) },
      },
    },
    async (request) => {
      await signIn.logout(request, request.caller);
      return { message: 'Logged out' };
    },
  );
}

/** Paths of the interface this service does not implement: 501. After registration's and the reset's routes, as before (the OpenAPI document's order). */
export async function unimplementedSignInRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  for (const path of ['/v1/auth/signin', '/v1/auth/validate']) {
    app.post(
      path,
      {
        schema: {
          tags,
          summary: 'Not implemented (social sign-in uses GraphQL oauthSignin and POST /v1/users/oauth)',
          response: { 501: MessageBody },
        },
      },
      async (_request, reply) => reply.status(501).send({ message: 'Not implemented' }),
    );
  }
}
