import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf, userIdOf } from '../../platform/auth/hooks.js';
import { errorResponses, publicBaseUrl, SuccessMessage } from '../../platform/http/envelopes.js';
import { AuthErrors } from '../../platform/http/errors.js';
import { IdParams } from '../../platform/http/schemas.js';
import { IntegrationErrors as E } from './errors.js';
import {
  BotStatusBody,
  BotStatusResult,
  CallbackParams,
  CallbackQuery,
  ConnectBody,
  Connection,
  Integration,
  IntegrationList,
  PlatformList,
  PlatformScopes,
  RefreshResult,
  SlugParams,
  StatsResult,
} from './schemas.js';
import { READ_INTEGRATIONS, WRITE_INTEGRATIONS, type IntegrationsService } from './service.js';

const tags = ['Integrations'];
const OWN = "Your own integrations only; anybody else's is not found.";
const Redirect = {
  description: 'To the redirect_uri given at connect, with the outcome in its query (Location)',
  type: 'null',
};
/** Codes of the routes that call the platform with the integration's tokens. */
const PLATFORM_CALL = [
  E.not_found,
  E.platform_not_configured,
  E.reconnect_required,
  E.provider_unavailable,
  E.provider_error,
] as const;

/** The path the platform sends the browser back to; it must be registered as a redirect URL of the platform app. */
const callbackPath = (platform: string) => `/v1/integrations/callback/${platform}`;

export async function integrationRoutes(
  fastify: FastifyInstance,
  { integrations }: { integrations: IntegrationsService },
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const read = { auth: READ_INTEGRATIONS };
  const write = { auth: WRITE_INTEGRATIONS };

  app.get(
    '/v1/integrations',
    {
      config: read,
      schema: {
        tags,
        summary: 'Your integrations (a bare array)',
        response: { 200: IntegrationList, ...errorResponses(AuthErrors.user_required) },
      },
    },
    async (request) => integrations.list(userIdOf(callerOf(request))),
  );

  app.get(
    '/v1/integrations/platforms',
    {
      config: read,
      schema: {
        tags,
        summary: 'The platforms one can connect; enabled is false where this server is not configured for one',
        response: { 200: PlatformList },
      },
    },
    async () => integrations.platforms(),
  );

  app.get(
    '/v1/integrations/platform/:slug',
    {
      config: read,
      schema: {
        tags,
        summary: 'Your integrations with one platform (a bare array)',
        params: SlugParams,
        response: { 200: IntegrationList, ...errorResponses(E.unknown_platform, AuthErrors.user_required) },
      },
    },
    async (request) => integrations.list(userIdOf(callerOf(request)), request.params.slug),
  );

  app.get(
    '/v1/integrations/platform/:slug/scopes',
    {
      config: read,
      schema: {
        tags,
        summary: 'The scopes a platform offers; required ones are always asked for',
        params: SlugParams,
        response: { 200: PlatformScopes, ...errorResponses(E.unknown_platform) },
      },
    },
    async (request) => integrations.scopes(request.params.slug),
  );

  app.post(
    '/v1/integrations/platform/:slug/connect',
    {
      config: write,
      schema: {
        tags,
        summary: 'Start connecting a platform account: send the browser to authorization_url',
        description:
          'The platform asks the user for consent and sends the browser to GET /v1/integrations/callback/{platform}, which ' +
          'redirects on to redirect_uri. The state is bound to you and redirect_uri, single use and valid 10 minutes. ' +
          'Connecting a platform again replaces the account and tokens of your integration with it.',
        params: SlugParams,
        body: ConnectBody,
        response: {
          200: Connection,
          ...errorResponses(
            E.unknown_platform,
            E.platform_not_configured,
            E.invalid_redirect_uri,
            E.unknown_scope,
            AuthErrors.user_required,
          ),
        },
      },
    },
    async (request) => {
      const userId = userIdOf(callerOf(request));
      // Canonical (no default port): the platform compares it as text with its registered redirect URLs.
      const callbackUrl = new URL(publicBaseUrl(request) + callbackPath(request.params.slug)).href;
      return integrations.connect(userId, request.params.slug, request.body, callbackUrl);
    },
  );

  app.get(
    '/v1/integrations/callback/:platform',
    {
      schema: {
        tags,
        summary: 'Where the platform sends the browser back (no credentials: the state identifies the connection)',
        description:
          'With a valid state: 302 to the redirect_uri given at connect, with `status=connected&integration_id=<id>&platform=<slug>`, ' +
          'or `status=error&error=<code>&platform=<slug>` (integration.access_denied when the user said no, integration.provider_unavailable, ' +
          'integration.provider_error, integration.platform_not_configured). A state that is malformed, forged, expired or already used ' +
          'answers 400 here instead: nothing vouches for its redirect_uri.',
        params: CallbackParams,
        querystring: CallbackQuery,
        response: { 302: Redirect, ...errorResponses(E.invalid_state, E.unknown_platform) },
      },
    },
    async (request, reply) => {
      const location = await integrations.completeConnection(request, request.params.platform, request.query);
      // The URL that brought the browser here carried an authorization code: no cache, no Referer.
      return reply
        .status(302)
        .header('location', location)
        .header('cache-control', 'no-store')
        .header('referrer-policy', 'no-referrer')
        .send(null);
    },
  );

  app.get(
    '/v1/integrations/:id',
    {
      config: read,
      schema: {
        tags,
        summary: 'One integration',
        description: OWN,
        params: IdParams,
        response: { 200: Integration, ...errorResponses(E.not_found, AuthErrors.user_required) },
      },
    },
    async (request) => integrations.get(userIdOf(callerOf(request)), request.params.id),
  );

  app.delete(
    '/v1/integrations/:id',
    {
      config: write,
      schema: {
        tags,
        summary: 'Disconnect: the token is revoked at the platform (best effort), then the integration is deleted',
        description: OWN,
        params: IdParams,
        response: { 200: SuccessMessage, ...errorResponses(E.not_found, AuthErrors.user_required) },
      },
    },
    async (request) => integrations.disconnect(request, userIdOf(callerOf(request)), request.params.id),
  );

  app.post(
    '/v1/integrations/:id/refresh',
    {
      config: write,
      schema: {
        tags,
        summary: 'Refresh the access token now',
        description: `${OWN} A refresh token the platform refuses makes the integration inactive (409 integration.reconnect_required): connect again.`,
        params: IdParams,
        response: { 200: RefreshResult, ...errorResponses(...PLATFORM_CALL, AuthErrors.user_required) },
      },
    },
    async (request) => integrations.refresh(userIdOf(callerOf(request)), request.params.id),
  );

  app.post(
    '/v1/integrations/:id/stats',
    {
      config: read,
      schema: {
        tags,
        summary: 'Channel stats, read from the platform now',
        description: `${OWN} An expired access token (or one the platform answers 401 to) is refreshed on the way.`,
        params: IdParams,
        response: { 200: StatsResult, ...errorResponses(...PLATFORM_CALL, AuthErrors.user_required) },
      },
    },
    async (request) => integrations.stats(userIdOf(callerOf(request)), request.params.id),
  );

  app.patch(
    '/v1/integrations/:id/stream-status',
    {
      config: write,
      schema: {
        tags,
        summary: 'Set the stream bot status',
        description: OWN,
        params: IdParams,
        body: BotStatusBody,
        response: { 200: BotStatusResult, ...errorResponses(E.not_found, AuthErrors.user_required) },
      },
    },
    async (request) =>
      integrations.setBotStatus(userIdOf(callerOf(request)), request.params.id, request.body.bot_status),
  );
}
