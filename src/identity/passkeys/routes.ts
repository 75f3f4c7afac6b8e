import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../../platform/auth/hooks.js';
import { Type } from 'typebox';
import { errorResponses, locateCreated, requestUrl } from '../../platform/http/envelopes.js';
import { SESSION_AUTH, sessionOnly } from '../sessions/index.js';
import { AuthResponse, ReauthenticationBody } from '../sign-in/schemas.js';
import { CurrentPasswordErrors, ReauthenticationErrors } from '../sign-in/errors.js';
import { BannedErrors } from '../bans/errors.js';
import { SessionErrors } from '../sessions/errors.js';
import { PasskeyErrors } from './errors.js';
import { TwoFactorErrors } from '../two-factor/errors.js';
import { SignInErrors } from '../sign-in-throttle/service.js';
import {
  Passkey,
  PasskeyIdParams,
  PasskeyList,
  PasskeySecondFactorBody,
  PasskeySecondFactorOptionsBody,
  PasskeySignInBody,
  PasskeySignInOptionsBody,
  RegisterPasskeyBody,
  RenamePasskeyBody,
  WebAuthnOptions,
} from './schemas.js';
import type { PasskeysService } from './service.js';

const tags = ['Passkeys'];
const own = { config: { auth: SESSION_AUTH }, onRequest: sessionOnly };

export async function passkeyRoutes(
  fastify: FastifyInstance,
  { passkeys }: { passkeys: PasskeysService },
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/v1/users/me/passkeys/options',
    {
      ...own,
      schema: {
        tags,
        summary: 'Options to create a passkey (navigator.credentials.create)',
        description:
          'A session only. A resident key (for sign-in without a username), user verification preferred; the challenge works once, for 5 minutes. ' +
          'A session signed in more than 15 minutes ago gives current_password (a wrong one: 400, counted towards the sign-in lockout, 429 once locked) ' +
          'or signs in again (403 auth.reauthentication_required otherwise): a stolen session alone cannot add a passkey. The body is optional.',
        body: ReauthenticationBody,
        response: {
          200: WebAuthnOptions,
          ...errorResponses(
            SessionErrors.session_required,
            ReauthenticationErrors.reauthentication_required,
            CurrentPasswordErrors.wrong_current_password,
            SignInErrors.locked_out,
          ),
        },
      },
      // Without a body (as before re-authentication): validated as `{}`.
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request) => passkeys.registrationOptions(request, callerOf(request), request.body.current_password),
  );

  app.post(
    '/v1/users/me/passkeys',
    {
      ...own,
      schema: {
        tags,
        summary: 'Register a passkey for yourself',
        description: 'The registration response of the options above. A session only.',
        body: RegisterPasskeyBody,
        response: {
          201: Passkey,
          ...errorResponses(
            SessionErrors.session_required,
            PasskeyErrors.invalid_response,
            PasskeyErrors.already_registered,
          ),
        },
      },
    },
    async (request, reply) => {
      const created = await passkeys.register(request, callerOf(request), request.body);
      locateCreated(request, reply, `/v1/users/me/passkeys/${created.id}`);
      return created;
    },
  );

  app.get(
    '/v1/users/me/passkeys',
    {
      ...own,
      schema: {
        tags,
        summary: 'Your passkeys, oldest first',
        response: { 200: PasskeyList, ...errorResponses(SessionErrors.session_required) },
      },
    },
    async (request) => ({ data: await passkeys.list(callerOf(request)), _links: { self: requestUrl(request) } }),
  );

  app.patch(
    '/v1/users/me/passkeys/:id',
    {
      ...own,
      schema: {
        tags,
        summary: 'Rename one of your passkeys',
        params: PasskeyIdParams,
        body: RenamePasskeyBody,
        response: { 200: Passkey, ...errorResponses(SessionErrors.session_required, PasskeyErrors.not_found) },
      },
    },
    async (request) => passkeys.rename(request, callerOf(request), request.params.id, request.body.name),
  );

  app.delete(
    '/v1/users/me/passkeys/:id',
    {
      ...own,
      schema: {
        tags,
        summary: 'Remove one of your passkeys',
        description:
          'Refused (409) for the last passkey of an account that has no password and no other sign-in account.',
        params: PasskeyIdParams,
        response: {
          204: Type.Null(),
          ...errorResponses(SessionErrors.session_required, PasskeyErrors.not_found, PasskeyErrors.last_credential),
        },
      },
    },
    async (request, reply) => {
      await passkeys.remove(request, callerOf(request), request.params.id);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/v1/auth/passkey/options',
    {
      schema: {
        tags: ['Authentication'],
        summary: 'Options to sign in with a passkey (navigator.credentials.get)',
        description:
          'Without `identifier` the browser offers every passkey it holds for this site (usernameless sign-in, conditional UI). The challenge works once, for 5 minutes.',
        body: PasskeySignInOptionsBody,
        response: { 200: WebAuthnOptions },
      },
    },
    async (request) => passkeys.signInOptions(request.body),
  );

  app.post(
    '/v1/auth/passkey',
    {
      schema: {
        tags: ['Authentication'],
        summary: 'Sign in with a passkey',
        description:
          'Answers as POST /v1/auth/login. A passkey that verified the user (PIN, biometrics) counts as two factors; one that did not is followed by a 2FA code when 2FA is on. A signature counter that went back is refused and recorded (passkey_clone_suspected).',
        body: PasskeySignInBody,
        response: {
          200: AuthResponse,
          ...errorResponses(PasskeyErrors.sign_in_failed, PasskeyErrors.cloned, BannedErrors.banned),
        },
      },
    },
    async (request) => passkeys.signIn(request, request.body),
  );

  app.post(
    '/v1/auth/2fa/passkey/options',
    {
      schema: {
        tags: ['Two-factor authentication'],
        summary: "Options to answer a sign-in's second step with a passkey (navigator.credentials.get)",
        description:
          "After POST /v1/auth/login answered requires_2fa: the temporary token's user's passkeys. It uses none of the token's attempts; the challenge works once, for 5 minutes.",
        body: PasskeySecondFactorOptionsBody,
        response: {
          200: WebAuthnOptions,
          ...errorResponses(TwoFactorErrors.invalid_challenge, PasskeyErrors.none_registered),
        },
      },
    },
    async (request) => passkeys.secondFactorOptions(request.body.temp_token),
  );

  app.post(
    '/v1/auth/2fa/passkey',
    {
      schema: {
        tags: ['Two-factor authentication'],
        summary: 'Finish a sign-in with a passkey as the second factor',
        description:
          "As POST /v1/auth/2fa/verify, with a passkey of the temporary token's user instead of a code: the session keeps the provider of the original sign-in; 2fa_verified is recorded with code_type passkey.",
        body: PasskeySecondFactorBody,
        response: {
          200: AuthResponse,
          ...errorResponses(
            TwoFactorErrors.invalid_challenge,
            PasskeyErrors.sign_in_failed,
            PasskeyErrors.cloned,
            BannedErrors.banned,
            SignInErrors.locked_out,
          ),
        },
      },
    },
    async (request) => passkeys.verifySecondFactor(request, request.body),
  );
}
