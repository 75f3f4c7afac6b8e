import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { callerOf, requireAuthenticated, requirePermission } from '../../platform/auth/hooks.js';
import { errorResponses, ListEnvelope, single, SingleEnvelope } from '../../platform/http/envelopes.js';
import { IdParams, MessageBody } from '../../platform/http/schemas.js';
import {
  AccountParams,
  EmailLinked,
  EmailLinkRequestBody,
  EmailLinkTokenBody,
  LinkMailed,
  PendingEmailLink,
  PlatformAccount,
} from './schemas.js';
import type { AccountsService } from './accounts.js';
import { AccountErrors, UserErrors } from './errors.js';
import { MailErrors, MailedTokenErrors } from '../../platform/mail/token-mail.js';

const tags = ['Platform accounts'];

export async function platformAccountRoutes(
  fastify: FastifyInstance,
  { accounts }: { accounts: AccountsService },
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const read = { auth: requirePermission('users:read', { orSelf: 'id' }) };
  const write = { auth: requirePermission('users:write', { orSelf: 'id' }) };

  app.get(
    '/v1/users/:id/accounts',
    {
      config: read,
      schema: {
        tags,
        summary: "A user's linked login accounts",
        params: IdParams,
        response: { 200: ListEnvelope(PlatformAccount), ...errorResponses(UserErrors.not_found) },
      },
    },
    async (request) => single(request, await accounts.list(request.params.id)),
  );

  app.put(
    '/v1/users/:id/accounts/:account_id/primary',
    {
      config: write,
      schema: {
        tags,
        summary: "Make an account the user's primary account",
        params: AccountParams,
        response: {
          200: SingleEnvelope(PlatformAccount),
          ...errorResponses(UserErrors.sign_in_beyond_caller, AccountErrors.not_found, UserErrors.not_found),
        },
      },
    },
    async (request) =>
      single(
        request,
        await accounts.makePrimary(request, callerOf(request), request.params.id, request.params.account_id),
      ),
  );

  app.delete(
    '/v1/users/:id/accounts/:account_id',
    {
      config: write,
      schema: {
        tags,
        summary: 'Unlink a login account',
        description: 'Refused (400) for the email account, the last remaining account and the primary account.',
        params: AccountParams,
        response: {
          204: Type.Null(),
          ...errorResponses(
            AccountErrors.unlink_email,
            AccountErrors.unlink_last,
            AccountErrors.unlink_primary,
            UserErrors.sign_in_beyond_caller,
            AccountErrors.not_found,
            UserErrors.not_found,
          ),
        },
      },
    },
    async (request, reply) => {
      await accounts.unlink(request, callerOf(request), request.params.id, request.params.account_id);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/v1/users/:id/email-link/request',
    {
      config: write,
      schema: {
        tags,
        summary: 'Add email/password sign-in: mails a confirmation link (24 hours)',
        description:
          'A new request replaces an older pending one. 409 when the user already has an email account or the address is in use.',
        params: IdParams,
        body: EmailLinkRequestBody,
        response: {
          200: LinkMailed,
          ...errorResponses(
            AccountErrors.email_sign_in_disabled,
            UserErrors.invalid_email,
            UserErrors.sign_in_beyond_caller,
            UserErrors.not_found,
            AccountErrors.email_already_linked,
            UserErrors.email_in_use,
            MailErrors.not_sent,
          ),
        },
      },
    },
    async (request) => accounts.requestEmailLink(request, callerOf(request), request.params.id, request.body),
  );

  app.post(
    '/v1/users/email-link/verify',
    {
      config: { auth: requireAuthenticated() },
      schema: {
        tags,
        summary: 'Confirm an email link with the mailed token: creates the email account',
        description: 'The token decides the user (as with POST /v1/auth/verify-email).',
        body: EmailLinkTokenBody,
        response: {
          200: EmailLinked,
          ...errorResponses(MailedTokenErrors.invalid, AccountErrors.email_already_linked, UserErrors.email_in_use),
        },
      },
    },
    async (request) => accounts.verifyEmailLink(request, request.body.token),
  );

  app.get(
    '/v1/users/:id/email-link/pending',
    {
      config: read,
      schema: {
        tags,
        summary: 'The pending email link, if any',
        params: IdParams,
        response: { 200: PendingEmailLink, ...errorResponses(UserErrors.not_found) },
      },
    },
    async (request) => accounts.pendingEmailLink(request.params.id),
  );

  app.delete(
    '/v1/users/:id/email-link/pending',
    {
      config: write,
      schema: {
        tags,
        summary: 'Cancel the pending email link',
        description: '404 when none is pending.',
        params: IdParams,
        response: {
          200: MessageBody,
          ...errorResponses(
            AccountErrors.no_email_link_pending,
            UserErrors.sign_in_beyond_caller,
            UserErrors.not_found,
          ),
        },
      },
    },
    async (request) => accounts.cancelEmailLink(callerOf(request), request.params.id),
  );
}
