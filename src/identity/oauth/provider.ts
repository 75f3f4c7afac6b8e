import { randomBytes, type JsonWebKey } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Kysely } from 'kysely';
import type { default as Provider, Configuration, KoaContextWithOIDC } from 'oidc-provider';
import { hashToken, OAUTH_ACCESS_TOKEN_PREFIX, sameSecret } from '../../platform/auth/tokens.js';
import type { Clock } from '../../platform/clock.js';
import type { Schema } from '../../platform/db/schema/index.js';
import { artifactAdapter, type AccessTokensRevoked, type ArtifactWriter } from './adapter.js';
import { SIGNING_ALGORITHM } from './keys.js';

export const OAUTH_PREFIX = '/v1/oauth';
/** Opaque refresh tokens are prefixed like access tokens, so secret scanners can find leaked ones. */
export const REFRESH_TOKEN_PREFIX = 'wgrt_';
export const OIDC_SCOPES = ['openid', 'offline_access', 'profile', 'email'];

/** Lifetimes in seconds. */
const TTL = {
  AccessToken: 3600,
  ClientCredentials: 3600,
  AuthorizationCode: 60,
  IdToken: 3600,
  RefreshToken: 14 * 86_400,
  Interaction: 600,
  Session: 14 * 86_400,
  Grant: 14 * 86_400,
};

/** Set on the raw request by the authorize route when a first-party app's assertion names the user. */
export const ASSERTED_USER = Symbol('asserted user');

export interface AccountClaims {
  [claim: string]: unknown;
  sub: string;
  preferred_username: string;
  name: string;
  picture?: string;
  locale?: string;
  updated_at: number;
  email?: string;
  email_verified?: boolean;
}

interface Deps {
  issuer: string;
  db: Kysely<Schema>;
  /** Saves artifacts (outlives the provider, which is rebuilt when the signing keys change). */
  writer: ArtifactWriter;
  clock: Clock;
  keys: JsonWebKey[];
  cookieKeys: string[];
  trustProxy: boolean;
  /** Permissions (resource:action) a client may ask for as scopes, besides the OpenID ones. */
  permissionScopes: string[];
  /** The registered client as RFC 7591 metadata, its client_secret being the secret's hash. */
  clientMetadataOf(id: string): Promise<object | undefined>;
  isFirstParty(clientId: string): Promise<boolean>;
  /** A user who may sign in (not deleted, not banned), as ID token and userinfo claims. */
  claimsOf(userId: string): Promise<AccountClaims | undefined>;
  /** The scopes a user consented to for a third-party client (undefined: never asked). */
  consentedScopes(userId: string, clientId: string): Promise<string[] | undefined>;
  accessTokensRevoked: AccessTokensRevoked;
}

/**
 * The OAuth 2.1 / OpenID Connect provider: oidc-provider (OpenID Certified), on our database, with the
 * clients of the oauth-clients module. Client secrets are stored hashed, so the provider compares the
 * hash of what a client presents; symmetric algorithms keyed by the client secret are therefore off.
 * Access tokens are opaque (`wgat_`): the API resolves them like sessions, so revocation takes effect
 * at once, which a self-contained JWT could not promise.
 */
export async function createProvider(deps: Deps): Promise<Provider> {
  // Loaded when the provider is first made (on the first OAuth request): oidc-provider and Koa took about
  // a fifth of a second of every start.
  const { default: Provider } = await import('oidc-provider');
  const adapterOf = (name: string) => artifactAdapter(deps.db, deps.writer, deps.clock, name, deps.accessTokensRevoked);
  const configuration: Configuration = {
    adapter: (name: string) =>
      name === 'Client'
        ? { ...adapterOf(name), find: async (id: string) => (await deps.clientMetadataOf(id)) as never }
        : adapterOf(name),
    jwks: { keys: deps.keys as never },
    cookies: { keys: deps.cookieKeys },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      // A client learns about its own tokens only (oidc-provider's default answers any confidential client
      // about every token, and anyone may register one). Tokens are opaque: this API resolves them itself.
      introspection: {
        enabled: true,
        allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId,
      },
      revocation: { enabled: true },
      userinfo: { enabled: true },
      // Apps sign users out through POST /v1/auth/logout-app and logout-everywhere.
      rpInitiatedLogout: { enabled: false },
      // Not routed (pushed requests are optional in OAuth 2.1), so not advertised in discovery either.
      pushedAuthorizationRequests: { enabled: false },
    },
    // A confidential client is registered for HTTP Basic (oidc-provider takes only a client's registered
    // method), so that is the one advertised; public clients send client_id alone.
    clientAuthMethods: ['client_secret_basic', 'none'],
    // Every client is registered for the code flow only: no implicit or hybrid response types (and so no
    // implicit grant) are offered in discovery.
    responseTypes: ['code'],
    enabledJWA: {
      idTokenSigningAlgValues: [SIGNING_ALGORITHM],
      userinfoSigningAlgValues: [SIGNING_ALGORITHM],
      introspectionSigningAlgValues: [SIGNING_ALGORITHM],
    },
    pkce: { required: () => true, methods: ['S256'] },
    allowOmittingSingleRegisteredRedirectUri: false,
    scopes: [...OIDC_SCOPES, ...deps.permissionScopes],
    claims: {
      openid: ['sub'],
      profile: ['name', 'preferred_username', 'picture', 'locale', 'updated_at'],
      email: ['email', 'email_verified'],
    },
    routes: { authorization: '/authorize', userinfo: '/userinfo' },
    ttl: TTL,
    interactions: { url: (_ctx, interaction) => `${OAUTH_PREFIX}/interaction/${interaction.uid}` },
    // A code-flow client allowed to refresh gets a refresh token without also having to send
    // offline_access with prompt=consent; rotated at every use, and a reused one revokes its grant.
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    // Tokens live by their own lifetimes, not the provider's browser session (an asserted authorization
    // has none); signing out ends them through logout-everywhere, logout-app or consent revocation.
    expiresWithSession: async () => false,
    rotateRefreshToken: true,
    findAccount: async (_ctx, sub) => {
      const claims = await deps.claimsOf(sub);
      return claims && { accountId: sub, claims: async () => claims };
    },
    loadExistingGrant: (ctx) => grantFor(ctx, deps),
    // Errors in the JSON shape RFC 6749 defines, also for the browser-facing endpoints.
    renderError: async (ctx, out) => {
      ctx.type = 'json';
      ctx.body = out;
    },
  };
  const provider = new Provider(deps.issuer, configuration);
  provider.proxy = deps.trustProxy;
  // The client's registered secret is the SHA-256 hash of the real one (oauth-clients stores nothing else).
  provider.Client.prototype.compareClientSecret = function compareHashed(
    this: { clientSecret?: string },
    actual: string,
  ) {
    return Promise.resolve(Boolean(this.clientSecret) && sameSecret(this.clientSecret!, hashToken(actual)));
  };
  // generateTokenId makes a model's ids (the type definitions leave it out); access tokens also record
  // their format there, as the provider's own implementation does.
  const prefixed = (prefix: string) =>
    function generateTokenId(this: { format?: string }) {
      this.format = 'opaque';
      return prefix + randomBytes(32).toString('base64url');
    };
  const withIds = (model: { prototype: object }, prefix: string) =>
    Object.assign(model.prototype, { generateTokenId: prefixed(prefix) });
  withIds(provider.AccessToken, OAUTH_ACCESS_TOKEN_PREFIX);
  withIds(provider.ClientCredentials, OAUTH_ACCESS_TOKEN_PREFIX);
  withIds(provider.RefreshToken, REFRESH_TOKEN_PREFIX);
  signInAssertedUsers(provider);
  // Codes come back in the query string (the code flow's own mode); oidc-provider lists fragment and
  // form_post in discovery whatever the response types, so the document names what clients get.
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.oidc?.route === 'discovery' && ctx.body && typeof ctx.body === 'object')
      (ctx.body as { response_modes_supported?: string[] }).response_modes_supported = ['query'];
  });
  return provider;
}

/**
 * The grant an authorization proceeds with: the one this browser session (or the consent just given)
 * holds, widened by what needs no asking: everything requested for a first-party client, for a
 * third-party one what the user consented to before. Whatever is still missing, the provider asks for
 * on the consent page. No grant at all while nothing is allowed yet.
 */
async function grantFor(ctx: KoaContextWithOIDC, deps: Deps) {
  const { client, session, provider } = ctx.oidc;
  const accountId = session!.accountId!;
  const clientId = client!.clientId;
  const requested = [...(ctx.oidc as unknown as { requestParamOIDCScopes: Set<string> }).requestParamOIDCScopes];
  const allowed = (await deps.isFirstParty(clientId))
    ? requested
    : ((await deps.consentedScopes(accountId, clientId)) ?? []);
  const decided = ctx.oidc.result?.consent?.grantId ?? session!.grantIdFor(clientId);
  const found = decided ? await provider.Grant.find(decided) : undefined;
  const existing = found && found.accountId === accountId && found.clientId === clientId ? found : undefined;
  const granted = requested.filter((scope) => allowed.includes(scope));
  if (!existing && !granted.length) return undefined;
  const grant = existing ?? new provider.Grant({ accountId, clientId });
  if (granted.length) grant.addOIDCScope(granted.join(' '));
  await grant.save();
  return grant;
}

/**
 * The server-side handoff: when the authorize route has verified a first-party app's assertion for a
 * user, the authorization runs as that user signed in. The session is never stored and no cookie is
 * set (it counts as destroyed): an assertion is good for one authorization, not a browser sign-in.
 */
function signInAssertedUsers(provider: Provider): void {
  const sessionOf = provider.Session.get.bind(provider.Session);
  provider.Session.get = async (ctx: KoaContextWithOIDC) => {
    const asserted = (ctx.req as IncomingMessage & { [ASSERTED_USER]?: string })[ASSERTED_USER];
    if (!asserted) return sessionOf(ctx);
    const session = new provider.Session();
    session.loginAccount({ accountId: asserted, amr: ['app_assertion'], transient: true });
    Object.defineProperty(session, 'destroyed', { value: true, writable: true });
    ctx.oidc.entity('Session', session);
    return session;
  };
}
