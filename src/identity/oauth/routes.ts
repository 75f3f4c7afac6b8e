import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { AppAssertionErrors, type AppAssertionVerifier } from '../../platform/auth/app-assertion.js';
import { callerOf, requireAuthenticated, requireOwnAccount } from '../../platform/auth/hooks.js';
import { errorResponses, SuccessMessage } from '../../platform/http/envelopes.js';
import { Uuid } from '../../platform/http/schemas.js';
import { OAuthErrors } from './errors.js';
import { UserErrors } from '../users/errors.js';
import { ClientIdParams, ConnectedAppList } from './schemas.js';
import { ASSERTED_USER, OAUTH_PREFIX } from './provider.js';
import type { OAuthService } from './service.js';

const tags = ['OAuth / OpenID Connect'];
const STANDARD = 'Behaves exactly as the named standard says; errors are RFC 6749 `{ error, error_description }`.';
/** A form the provider reads itself: the fields it may take are the standard's, so only the required ones are declared. */
const FormBody = (properties: Parameters<typeof Type.Object>[0], example: Record<string, string>) =>
  Type.Object(properties, { additionalProperties: true, examples: [example] });
const AUTHORIZE_EXAMPLE = {
  response_type: 'code',
  client_id: 'waygate-app',
  redirect_uri: 'https://app.example.org/callback',
  scope: 'openid profile',
  state: 'af0ifjsldkj',
  code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
  code_challenge_method: 'S256',
};
const TOKEN_EXAMPLE = { token: 'Yv3lZk0t8QbP2nS6xW1cR9mJ4hD7gF5aE0uK3oL8iTq' };
const Json = Type.Object({}, { additionalProperties: true });

/**
 * The provider's endpoints. Each is declared here (so it is in the OpenAPI document and passes the
 * platform's hooks), and handed to oidc-provider before its body is read: the provider parses
 * form bodies and client authentication itself.
 */
export async function oauthRoutes(
  app: FastifyInstance,
  { oauth, assertions }: { oauth: OAuthService; assertions: AppAssertionVerifier },
): Promise<void> {
  /** The provider sees its own path in `url`, and in `originalUrl` where it is mounted (as under Express). */
  const handOver = (originalUrl: (url: string) => string) => async (request: FastifyRequest, reply: FastifyReply) => {
    const provider = await oauth.provider();
    reply.hijack();
    const raw = request.raw as IncomingMessage & { originalUrl?: string };
    raw.originalUrl = originalUrl(raw.url ?? '/');
    raw.url = raw.originalUrl.slice(OAUTH_PREFIX.length) || '/';
    void provider.callback()(raw, reply.raw);
  };
  const underPrefix = handOver((url) => url);
  // The root metadata addresses are the provider's own document, so every link in it stays under the prefix.
  const atRoot = handOver((url) =>
    url.replace(/^\/\.well-known\/[^?]+/, `${OAUTH_PREFIX}/.well-known/openid-configuration`),
  );
  app.addHook('onClose', () => oauth.stop());
  // Never reached: the request is handed over in onRequest.
  const handled = async () => undefined;

  // One issuer ({origin}/v1/oauth), at the two addresses the standards derive from it: OpenID Connect
  // Discovery appends /.well-known/openid-configuration to the issuer, RFC 8414 inserts
  // /.well-known/oauth-authorization-server before its path. The root addresses would imply the issuer
  // {origin}, which strict clients refuse, so none is served there.
  for (const url of [
    `${OAUTH_PREFIX}/.well-known/openid-configuration`,
    `/.well-known/oauth-authorization-server${OAUTH_PREFIX}`,
  ]) {
    app.get(
      url,
      {
        onRequest: url.startsWith(OAUTH_PREFIX) ? underPrefix : atRoot,
        schema: {
          tags,
          summary: 'Provider metadata (OpenID Connect Discovery 1.0, RFC 8414); one issuer at every address',
          description: STANDARD,
          response: { 200: Json },
        },
      },
      handled,
    );
  }
  app.get(
    `${OAUTH_PREFIX}/jwks`,
    {
      onRequest: underPrefix,
      schema: {
        tags,
        summary: 'Public signing keys (RFC 7517); retired keys stay until tokens they signed expire',
        response: { 200: Json },
      },
    },
    handled,
  );
  /**
   * The server-side handoff: a first-party app's backend carries X-ID-App-Assertion for the user instead
   * of a browser session, and receives the redirect with the code (no page is shown).
   */
  const assertedOrBrowser = async (request: FastifyRequest, reply: FastifyReply) => {
    const header = request.headers['x-id-app-assertion'];
    if (typeof header === 'string') {
      const { subject } = await assertions.verify(header);
      const url = new URL(request.url, 'http://localhost');
      if (!(await oauth.activeClient(url.searchParams.get('client_id') ?? ''))?.is_first_party)
        throw OAuthErrors.assertion_needs_first_party_client();
      if (!(await oauth.claimsOf(subject))) throw OAuthErrors.assertion_user_unavailable();
      const raw = request.raw as IncomingMessage & { [ASSERTED_USER]?: string };
      raw[ASSERTED_USER] = subject;
      // No page can be shown to a backend: anything that would need one comes back as an error instead.
      url.searchParams.set('prompt', 'none');
      raw.url = url.pathname + url.search;
    }
    return underPrefix(request, reply);
  };
  const authorizeSchema = {
    tags,
    summary: 'Authorization endpoint (RFC 6749, OpenID Connect): code flow with PKCE (S256)',
    description:
      `${STANDARD} A browser is sent to the sign-in and consent pages as needed, then back to the redirect_uri ` +
      "with the code. A first-party app's backend may instead send X-ID-App-Assertion for the user (GET only) and read the " +
      'code from the 303 Location; third-party clients always go through the browser.',
    response: {
      303: Type.Null({ description: 'To the sign-in page, or back to the client with code or error' }),
      400: Json,
      ...errorResponses(
        ...Object.values(AppAssertionErrors),
        OAuthErrors.assertion_needs_first_party_client,
        OAuthErrors.assertion_user_unavailable,
      ),
    },
  };
  app.get(`${OAUTH_PREFIX}/authorize`, { onRequest: assertedOrBrowser, schema: authorizeSchema }, handled);
  app.post(
    `${OAUTH_PREFIX}/authorize`,
    {
      onRequest: underPrefix,
      schema: {
        ...authorizeSchema,
        consumes: ['application/x-www-form-urlencoded'],
        body: FormBody({}, AUTHORIZE_EXAMPLE),
      },
    },
    handled,
  );
  app.get(
    `${OAUTH_PREFIX}/authorize/:uid`,
    {
      onRequest: underPrefix,
      schema: {
        tags,
        summary: 'Where the sign-in and consent pages return to; continues the authorization',
        params: Type.Object({ uid: Type.String() }),
        response: { 303: Type.Null(), 400: Json },
      },
    },
    handled,
  );
  for (const method of ['GET', 'POST'] as const) {
    app.route({
      method,
      url: `${OAUTH_PREFIX}/userinfo`,
      onRequest: underPrefix,
      schema: {
        tags,
        summary: 'Claims about the signed-in user (OpenID Connect UserInfo), for an access token',
        description: STANDARD,
        response: { 200: Json, 401: Json },
      },
      handler: handled,
    });
  }

  app.post(
    `${OAUTH_PREFIX}/revoke`,
    {
      config: { auth: requireAuthenticated() },
      schema: {
        tags,
        summary: 'Withdraw your consent to a third-party client',
        description:
          'Ends every token the client holds for you; the next authorization asks for consent again. ' +
          'Needs your session (not an OAuth access token: no app withdraws the consent given to another). Records consent_revoked.',
        body: Type.Object(
          { client_id: Uuid },
          { additionalProperties: false, examples: [{ client_id: '7a2b3c4d-5e6f-4a8b-9c0d-1e2f3a4b5c6d' }] },
        ),
        response: {
          200: SuccessMessage,
          ...errorResponses(OAuthErrors.user_context_required, OAuthErrors.consent_not_found),
        },
      },
    },
    async (request) => {
      const { client_id: clientId } = request.body as { client_id: string };
      await oauth.revokeConsent(request, callerOf(request), clientId);
      return { success: true, message: 'Consent withdrawn; the app has been signed out' };
    },
  );

  app.get(
    '/v1/users/me/connected-apps',
    {
      config: { auth: requireOwnAccount('connected_apps:read') },
      schema: {
        tags,
        summary: 'The apps connected to your account: every OAuth client holding a grant or your consent',
        description:
          'Most recently used first. last_used_at is when the app last got a token for you (a sign-in or a refresh). ' +
          'A credential without a user (an API key with no owner) gets 404.',
        response: { 200: ConnectedAppList, ...errorResponses(UserErrors.credential_without_user) },
      },
    },
    async (request) => ({ data: await oauth.connectedAppsOf(callerOf(request)) }),
  );

  app.delete(
    '/v1/users/me/connected-apps/:client_id',
    {
      config: { auth: requireOwnAccount('connected_apps:revoke') },
      schema: {
        tags,
        summary: 'Disconnect an app: your consent goes, and every token, code and grant it holds for you',
        description:
          'As POST /v1/oauth/revoke (the same service), also for an app you never consented to (a first-party app); ' +
          'its next authorization asks again. Records consent_revoked. 404 when the app holds nothing of yours.',
        params: ClientIdParams,
        response: {
          204: Type.Null(),
          ...errorResponses(UserErrors.credential_without_user, OAuthErrors.app_not_connected),
        },
      },
    },
    async (request, reply) => {
      await oauth.disconnectApp(request, callerOf(request), (request.params as { client_id: string }).client_id);
      return reply.status(204).send(null);
    },
  );

  app.post(
    `${OAUTH_PREFIX}/token`,
    {
      onRequest: underPrefix,
      schema: {
        tags,
        summary: 'Token endpoint (RFC 6749): authorization_code with PKCE, refresh_token, client_credentials',
        description: `${STANDARD} Client authentication: HTTP Basic or client_secret_post; public clients send client_id. Responses carry Cache-Control: no-store.`,
        consumes: ['application/x-www-form-urlencoded'],
        body: FormBody(
          { grant_type: Type.String() },
          {
            grant_type: 'authorization_code',
            code: 'Sp1x-2Qm9hZ0YcLx',
            redirect_uri: 'https://app.example.org/callback',
            client_id: 'waygate-app',
            code_verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
          },
        ),
        response: { 200: Json, 400: Json, 401: Json },
      },
    },
    handled,
  );
  app.post(
    `${OAUTH_PREFIX}/token/introspection`,
    {
      onRequest: underPrefix,
      schema: {
        tags,
        summary: 'Token introspection (RFC 7662), for authenticated clients',
        description: STANDARD,
        consumes: ['application/x-www-form-urlencoded'],
        body: FormBody({ token: Type.String() }, TOKEN_EXAMPLE),
        response: { 200: Json, 400: Json, 401: Json },
      },
    },
    handled,
  );
  app.post(
    `${OAUTH_PREFIX}/token/revocation`,
    {
      onRequest: underPrefix,
      schema: {
        tags,
        summary: 'Token revocation (RFC 7009), for authenticated clients',
        description: STANDARD,
        consumes: ['application/x-www-form-urlencoded'],
        body: FormBody({ token: Type.String() }, TOKEN_EXAMPLE),
        response: { 200: Type.Null(), 400: Json, 401: Json },
      },
    },
    handled,
  );
}
