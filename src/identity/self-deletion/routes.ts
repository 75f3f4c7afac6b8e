import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../../platform/auth/hooks.js';
import { errorResponses } from '../../platform/http/envelopes.js';
import { SessionErrors } from '../sessions/errors.js';
import { SignInErrors } from '../sign-in-throttle/service.js';
import { UserErrors } from '../users/errors.js';
import { CurrentPasswordErrors } from '../sign-in/errors.js';
import { AccountDeletionErrors } from './errors.js';
import { AccountDeletionScheduled, DeleteMyAccountBody } from './schemas.js';
import { ACCOUNT_DELETION_MESSAGE, type SelfDeletion } from './service.js';
import { SESSION_AUTH, sessionOnly } from '../sessions/index.js';

/**
 * POST rather than DELETE /v1/users/me: the request carries the password, and a body on DELETE has no
 * defined meaning in HTTP (RFC 9110), so proxies and some clients drop it.
 */
export async function selfDeletionRoutes(
  fastify: FastifyInstance,
  { selfDeletion }: { selfDeletion: SelfDeletion },
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/v1/users/me/delete',
    {
      config: { auth: SESSION_AUTH },
      onRequest: sessionOnly,
      // A password-less account sends no body: it is validated as `{}`.
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        tags: ['Users'],
        summary: 'Delete your own account (soft delete with the 7-day grace period)',
        description:
          "A session token only (API keys and apps' tokens: 403). An account with a password gives current_password, checked as " +
          'POST /v1/users/me/password checks it: a wrong one answers 400 and counts towards the sign-in lockout (429 once locked). ' +
          'An account without a password (social or passkey sign-in) needs a session signed in within the last 15 minutes (403 otherwise). ' +
          'Then it is DELETE /v1/users/{id}: every session (this one too) and API key ends, a mail names the purge date, and an ' +
          'administrator can restore the account until then. The last super admin cannot delete themselves (409).',
        body: DeleteMyAccountBody,
        response: {
          200: AccountDeletionScheduled,
          ...errorResponses(
            SessionErrors.session_required,
            AccountDeletionErrors.current_password_required,
            CurrentPasswordErrors.wrong_current_password,
            AccountDeletionErrors.sign_in_again,
            SignInErrors.locked_out,
            UserErrors.last_super_admin,
            UserErrors.not_found,
          ),
        },
      },
    },
    async (request) => {
      const { scheduled_deletion_at } = await selfDeletion.deleteOwn(request, callerOf(request), request.body);
      return { message: ACCOUNT_DELETION_MESSAGE, scheduled_deletion_at };
    },
  );
}
