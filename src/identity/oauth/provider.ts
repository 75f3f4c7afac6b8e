import type { JsonWebKey } from 'node:crypto';
import type { Kysely } from 'kysely';
import Provider, { type Configuration } from 'oidc-provider';
import { hashToken, sameSecret } from '../../platform/auth/tokens.js';
import type { Clock } from '../../platform/clock.js';
import type { Schema } from '../../platform/db/schema/index.js';
import { artifactAdapter } from './adapter.js';
import { SIGNING_ALGORITHM } from './keys.js';

export const OAUTH_PREFIX = '/v1/oauth';

/** Lifetimes in seconds. */
const TTL = { AccessToken: 3600, ClientCredentials: 3600, AuthorizationCode: 60, IdToken: 3600, RefreshToken: 14 * 86_400, Interaction: 600, Session: 14 * 86_400, Grant: 14 * 86_400 };

interface Deps {
  issuer: string;
  db: Kysely<Schema>;
  clock: Clock;
  keys: JsonWebKey[];
  cookieKeys: string[];
  trustProxy: boolean;
  /** The registered client as RFC 7591 metadata, its client_secret being the secret's hash. */
  clientMetadataOf(id: string): Promise<object | undefined>;
}

/**
 * The OAuth 2.1 / OpenID Connect provider: oidc-provider (OpenID Certified), on our database, with the
 * clients of the oauth-clients module. Client secrets are stored hashed, so the provider compares the
 * hash of what a client presents; symmetric algorithms keyed by the client secret are therefore off.
 */
export function createProvider(deps: Deps): Provider {
  const configuration: Configuration = {
    adapter: (name: string) =>
      name === 'Client'
        ? { ...artifactAdapter(deps.db, deps.clock, name), find: async (id: string) => (await deps.clientMetadataOf(id)) as never }
        : artifactAdapter(deps.db, deps.clock, name),
    jwks: { keys: deps.keys as never },
    cookies: { keys: deps.cookieKeys },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      revocation: { enabled: true },
    },
    clientAuthMethods: ['client_secret_basic', 'client_secret_post', 'none'],
    enabledJWA: { idTokenSigningAlgValues: [SIGNING_ALGORITHM], userinfoSigningAlgValues: [SIGNING_ALGORITHM], introspectionSigningAlgValues: [SIGNING_ALGORITHM] },
    pkce: { required: () => true, methods: ['S256'] },
    scopes: ['openid', 'offline_access', 'profile', 'email'],
    routes: { authorization: '/authorize', userinfo: '/userinfo', end_session: '/logout' },
    ttl: TTL,
    findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
    // Errors in the JSON shape RFC 6749 defines, also for the browser-facing endpoints.
    renderError: async (ctx, out) => {
      ctx.type = 'json';
      ctx.body = out;
    },
  };
  const provider = new Provider(deps.issuer, configuration);
  provider.proxy = deps.trustProxy;
  // The client's registered secret is the SHA-256 hash of the real one (oauth-clients stores nothing else).
  provider.Client.prototype.compareClientSecret = function compareHashed(this: { clientSecret?: string }, actual: string) {
    return Promise.resolve(Boolean(this.clientSecret) && sameSecret(this.clientSecret!, hashToken(actual)));
  };
  return provider;
}
