import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { errorResponses } from '../../platform/http/envelopes.js';
import { OAuthErrors } from './errors.js';
import { OAUTH_PREFIX } from './provider.js';
import type { OAuthService } from './service.js';

const tags = ['OAuth / OpenID Connect'];
const STANDARD = 'Behaves exactly as the named standard says; errors are RFC 6749 `{ error, error_description }`.';
const FormBody = (properties: Parameters<typeof Type.Object>[0]) => Type.Object(properties, { additionalProperties: true });
const Json = Type.Object({}, { additionalProperties: true });

/**
 * The provider's endpoints. Each is declared here (so it is in the OpenAPI document and passes the
 * platform's hooks), and handed to oidc-provider before its body is read: the provider parses
 * form bodies and client authentication itself.
 */
export async function oauthRoutes(app: FastifyInstance, { oauth }: { oauth: OAuthService }): Promise<void> {
  /** The provider sees its own path in `url`, and in `originalUrl` where it is mounted (as under Express). */
  const handOver = (originalUrl: (url: string) => string) => async (request: FastifyRequest, reply: FastifyReply) => {
    const provider = await oauth.provider();
    reply.hijack();
    const raw = request.raw as IncomingMessage & { originalUrl?: string };
    raw.originalUrl = originalUrl(raw.url ?? '/');
    raw.url = raw.originalUrl.slice(OAUTH_PREFIX.length) || '/';
    provider.callback()(raw, reply.raw);
  };
  const underPrefix = handOver((url) => url);
  // The root metadata addresses are the provider's own document, so every link in it stays under the prefix.
  const atRoot = handOver((url) => url.replace(/^\/\.well-known\/[^?]+/, `${OAUTH_PREFIX}/.well-known/openid-configuration`));
  // Never reached: the request is handed over in onRequest.
  const handled = async () => undefined;
  const unavailable = errorResponses(OAuthErrors.public_url_required);

  for (const url of [`${OAUTH_PREFIX}/.well-known/openid-configuration`, '/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
    app.get(url, {
      onRequest: url.startsWith(OAUTH_PREFIX) ? underPrefix : atRoot,
      schema: { tags, summary: 'Provider metadata (OpenID Connect Discovery 1.0, RFC 8414); one issuer at every address', description: STANDARD, response: { 200: Json, ...unavailable } },
    }, handled);
  }
  app.get(`${OAUTH_PREFIX}/jwks`, {
    onRequest: underPrefix,
    schema: { tags, summary: 'Public signing keys (RFC 7517); retired keys stay until tokens they signed expire', response: { 200: Json, ...unavailable } },
  }, handled);
  app.post(`${OAUTH_PREFIX}/token`, {
    onRequest: underPrefix,
    schema: {
      tags,
      summary: 'Token endpoint (RFC 6749): authorization_code with PKCE, refresh_token, client_credentials',
      description: `${STANDARD} Client authentication: HTTP Basic or client_secret_post; public clients send client_id. Responses carry Cache-Control: no-store.`,
      consumes: ['application/x-www-form-urlencoded'],
      body: FormBody({ grant_type: Type.String() }),
      response: { 200: Json, 400: Json, 401: Json, ...unavailable },
    },
  }, handled);
  app.post(`${OAUTH_PREFIX}/token/introspection`, {
    onRequest: underPrefix,
    schema: { tags, summary: 'Token introspection (RFC 7662), for authenticated clients', description: STANDARD, consumes: ['application/x-www-form-urlencoded'], body: FormBody({ token: Type.String() }), response: { 200: Json, 400: Json, 401: Json, ...unavailable } },
  }, handled);
  app.post(`${OAUTH_PREFIX}/token/revocation`, {
    onRequest: underPrefix,
    schema: { tags, summary: 'Token revocation (RFC 7009), for authenticated clients', description: STANDARD, consumes: ['application/x-www-form-urlencoded'], body: FormBody({ token: Type.String() }), response: { 200: Type.Null(), 400: Json, 401: Json, ...unavailable } },
  }, handled);
}
