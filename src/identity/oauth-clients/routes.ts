import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { callerOf, requireOwnAccount, requirePermission } from '../../platform/auth/hooks.js';
import { errorResponses, locateCreated } from '../../platform/http/envelopes.js';
import { IdParams } from '../../platform/http/schemas.js';
import { OAuthClientErrors } from './errors.js';
import {
  ClientCreated,
  ClientList,
  CreateClientBody,
  OAuthClient,
  SecretRegenerated,
  UpdateClientBody,
} from './schemas.js';
import type { OAuthClientsService } from './service.js';

const tags = ['OAuth clients'];
const OWNER_OR_ADMIN = "For the client's owner or a super admin; anybody else gets 404.";
// A key or an app's token that could change a client could send its users' codes anywhere: they need these.
const read = { auth: requireOwnAccount('oauth_clients:read') };
const write = { auth: requireOwnAccount('oauth_clients:write') };
const remove = { auth: requireOwnAccount('oauth_clients:delete') };

export async function oauthClientRoutes(
  fastify: FastifyInstance,
  { clients }: { clients: OAuthClientsService },
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/v1/oauth/clients',
    {
      config: read,
      schema: { tags, summary: 'Your OAuth clients, newest first', response: { 200: ClientList } },
    },
    async (request) => ({ data: await clients.listMine(callerOf(request)) }),
  );

  app.get(
    '/v1/oauth/clients/all',
    {
      config: { auth: requirePermission('*:*') },
      schema: { tags, summary: 'Every OAuth client (super admins)', response: { 200: ClientList } },
    },
    async () => ({ data: await clients.listAll() }),
  );

  app.get(
    '/v1/oauth/clients/:id',
    {
      config: read,
      schema: {
        tags,
        summary: 'One OAuth client',
        description: OWNER_OR_ADMIN,
        params: IdParams,
        response: { 200: OAuthClient, ...errorResponses(OAuthClientErrors.not_found) },
      },
    },
    async (request) => clients.get(callerOf(request), request.params.id),
  );

  app.post(
    '/v1/oauth/clients',
    {
      config: write,
      schema: {
        tags,
        summary: "Register an OAuth client; a confidential client's secret is shown once",
        description:
          'Redirect URIs are matched exactly: absolute https, or http on a loopback address, no fragment. is_first_party ' +
          '(skips consent) and owner_user_id (who must hold role_developer) are for super admins. The owner defaults to you.',
        body: CreateClientBody,
        response: {
          201: ClientCreated,
          ...errorResponses(
            OAuthClientErrors.invalid_redirect_uri,
            OAuthClientErrors.unknown_owner,
            OAuthClientErrors.owner_not_developer,
            OAuthClientErrors.first_party_forbidden,
            OAuthClientErrors.owner_super_admin_only,
            OAuthClientErrors.owner_required,
          ),
        },
      },
    },
    async (request, reply) => {
      const answer = await clients.create(request, callerOf(request), request.body);
      locateCreated(request, reply, `/v1/oauth/clients/${answer.client.id}`);
      return answer;
    },
  );

  app.patch(
    '/v1/oauth/clients/:id',
    {
      config: write,
      schema: {
        tags,
        summary: 'Change an OAuth client; fields left out stay as they are',
        description: `${OWNER_OR_ADMIN} A first-party client cannot be changed, by anyone (403 oauth_client.first_party_immutable); is_first_party and owner_user_id follow the rules of registration.`,
        params: IdParams,
        body: UpdateClientBody,
        response: {
          200: OAuthClient,
          ...errorResponses(
            OAuthClientErrors.invalid_redirect_uri,
            OAuthClientErrors.unknown_owner,
            OAuthClientErrors.owner_not_developer,
            OAuthClientErrors.first_party_immutable,
            OAuthClientErrors.first_party_forbidden,
            OAuthClientErrors.owner_super_admin_only,
            OAuthClientErrors.not_found,
          ),
        },
      },
    },
    async (request) => clients.update(request, callerOf(request), request.params.id, request.body),
  );

  app.post(
    '/v1/oauth/clients/:id/regenerate-secret',
    {
      config: write,
      schema: {
        tags,
        summary: 'A new secret for a confidential client, shown once; the old one stops working at once',
        description: OWNER_OR_ADMIN,
        params: IdParams,
        response: {
          200: SecretRegenerated,
          ...errorResponses(
            OAuthClientErrors.public_has_no_secret,
            OAuthClientErrors.first_party_locked,
            OAuthClientErrors.not_found,
          ),
        },
      },
    },
    async (request) => clients.regenerateSecret(request, callerOf(request), request.params.id),
  );

  app.delete(
    '/v1/oauth/clients/:id',
    {
      config: remove,
      schema: {
        tags,
        summary: 'Delete an OAuth client',
        description: `${OWNER_OR_ADMIN} A first-party client cannot be deleted, by anyone (403 oauth_client.first_party_immutable): regenerate its secret and discard it to retire it.`,
        params: IdParams,
        response: {
          204: Type.Null(),
          ...errorResponses(OAuthClientErrors.first_party_immutable, OAuthClientErrors.not_found),
        },
      },
    },
    async (request, reply) => {
      await clients.remove(request, callerOf(request), request.params.id);
      return reply.status(204).send(null);
    },
  );
}
