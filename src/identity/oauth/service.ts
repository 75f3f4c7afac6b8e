import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type Provider from 'oidc-provider';
import type { Config } from '../../config.js';
import type { Clock } from '../../platform/clock.js';
import type { Schema } from '../../platform/db/schema/index.js';
import type { SecretBox } from '../../platform/secret-box.js';
import type { OAuthClientsService } from '../oauth-clients/service.js';
import { purgeExpiredArtifacts } from './adapter.js';
import { OAuthErrors } from './errors.js';
import { signingKeys } from './keys.js';
import { createProvider, OAUTH_PREFIX } from './provider.js';

interface Deps {
  db: Kysely<Schema>;
  clock: Clock;
  secretBox: SecretBox;
  config: Pick<Config, 'publicUrl' | 'trustProxy'>;
  clients: Pick<OAuthClientsService, 'providerMetadataOf'>;
}

/** The OAuth provider, made on first use (its keys come from the database) and then kept. */
export function createOAuthService(deps: Deps) {
  let provider: Promise<Provider> | undefined;

  async function make(): Promise<Provider> {
    const keys = await signingKeys(deps.db, deps.secretBox);
    // The authorization flow's cookies are signed with a key derived from the oldest signing key's private
    // part: secret, and the same on every node, without another secret to configure.
    const cookieKey = createHash('sha256').update(`oauth-cookies:${keys.at(-1)!.d}`).digest('base64url');
    return createProvider({
      issuer: `${deps.config.publicUrl!.replace(/\/+$/, '')}${OAUTH_PREFIX}`,
      db: deps.db,
      clock: deps.clock,
      keys,
      cookieKeys: [cookieKey],
      trustProxy: Boolean(deps.config.trustProxy),
      clientMetadataOf: deps.clients.providerMetadataOf,
    });
  }

  return {
    /** 503 until PUBLIC_URL is configured. */
    provider(): Promise<Provider> {
      if (!deps.config.publicUrl) return Promise.reject(OAuthErrors.public_url_required());
      provider ??= make().catch((err: unknown) => {
        provider = undefined;
        throw err;
      });
      return provider;
    },
    purgeExpired: () => purgeExpiredArtifacts(deps.db, deps.clock),
  };
}

export type OAuthService = ReturnType<typeof createOAuthService>;
