import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type Provider from 'oidc-provider';
import type { Config } from '../../config.js';
import type { AuditWriter } from '../../platform/audit.js';
import type { Caller } from '../../platform/auth/caller.js';
import type { CredentialResolver } from '../../platform/auth/credentials.js';
import { hashToken } from '../../platform/auth/tokens.js';
import type { Clock } from '../../platform/clock.js';
import type { Schema } from '../../platform/db/schema/index.js';
import type { SecretBox } from '../../platform/secret-box.js';
import type { AccessService } from '../access/service.js';
import type { OAuthClientsService } from '../oauth-clients/service.js';
import type { UsersService } from '../users/service.js';
import {
  accessTokenHashesOf,
  createArtifactWriter,
  holdingsOf,
  purgeExpiredArtifacts,
  revokeArtifactsOf,
  revokeArtifactsOfClient,
} from './adapter.js';
import { createConsentsRepo } from './consents.js';
import { OAuthErrors } from './errors.js';
import { UserErrors } from '../users/errors.js';
import { afterCommit } from '../../platform/events.js';
import { forgetSigningKeys, keySetVersion, retireSupersededKeys, rotateSigningKey, signingKeys } from './keys.js';
import { createProvider, OAUTH_PREFIX, OIDC_SCOPES, type AccountClaims } from './provider.js';

interface Deps {
  db: Kysely<Schema>;
  clock: Clock;
  secretBox: SecretBox;
  audit: AuditWriter;
  credentials: Pick<CredentialResolver, 'invalidate'>;
  /** `publicUrl` here is the issuer's base (PUBLIC_URL, or the local default of `oauthIssuerBase`). */
  config: { publicUrl: string; trustProxy: Config['trustProxy'] };
  clients: Pick<OAuthClientsService, 'providerMetadataOf' | 'activeClient'>;
  users: Pick<UsersService, 'findSignInUser'>;
  access: Pick<AccessService, 'accessOfUser' | 'listPermissions'>;
}

/** The user a credential acts for; an API key without an owner has none (404, as GET /v1/users/me answers). */
function userOf(caller: Caller): string {
  if (!caller.userId) throw UserErrors.credential_without_user();
  return caller.userId;
}

/** How often each node looks for a rotated or retired signing key. */
const KEY_CHECK_INTERVAL_MS = 60_000;

/** The OAuth provider (made on first use: its keys come from the database), consents and OAuth tokens. */
export function createOAuthService(deps: Deps) {
  let provider: Promise<Provider> | undefined;
  let keysVersion: string | undefined;
  let keysCheckedAt = 0;
  const consents = createConsentsRepo(deps.db, deps.clock);
  const writer = createArtifactWriter(deps.db, deps.clock);

  /** A user who may sign in, with the claims the `profile` and `email` scopes release. */
  async function claimsOf(userId: string): Promise<AccountClaims | undefined> {
    const user = await deps.users.findSignInUser(userId);
    if (!user) return undefined;
    return {
      sub: user.id,
      preferred_username: user.username,
      name: user.username,
      ...(user.preferred_locale ? { locale: user.preferred_locale } : {}),
      updated_at: Math.floor(user.updated_at.getTime() / 1000),
      // Email sign-in accounts exist only after the address was verified (registration confirms it).
      ...(user.email ? { email: user.email, email_verified: true } : {}),
    };
  }

  async function make(): Promise<Provider> {
    keysVersion = await keySetVersion(deps.db, deps.clock);
    keysCheckedAt = deps.clock.nowMs();
    const keys = await signingKeys(deps.db, deps.secretBox, deps.clock);
    // Wildcard permissions are never scopes: a token names what it may do.
    const permissions = (await deps.access.listPermissions())
      .map((p) => `${p.resource}:${p.action}`)
      .filter((p) => !p.includes('*'));
    // The authorization flow's cookies are signed with keys derived from the signing keys' private parts:
    // secret, the same on every node, rotating with them (the first signs, all verify).
    const cookieKeys = keys.map((key) => createHash('sha256').update(`oauth-cookies:${key.d}`).digest('base64url'));
    return createProvider({
      issuer: `${deps.config.publicUrl.replace(/\/+$/, '')}${OAUTH_PREFIX}`,
      db: deps.db,
      writer,
      clock: deps.clock,
      keys,
      cookieKeys,
      trustProxy: Boolean(deps.config.trustProxy),
      permissionScopes: permissions,
      clientMetadataOf: deps.clients.providerMetadataOf,
      isFirstParty: async (clientId) => Boolean((await deps.clients.activeClient(clientId))?.is_first_party),
      claimsOf,
      consentedScopes: consents.scopesOf,
      accessTokensRevoked: (hashes) => deps.credentials.invalidate(hashes),
    });
  }

  /** A token whose grant was revoked (a reused refresh token) is void, even one a racing request saved after. */
  const grantExists = async (grantId: string) =>
    Boolean(
      await deps.db
        .selectFrom('oauth_artifacts')
        .select('id')
        .where('model', '=', 'Grant')
        .where('id', '=', hashToken(grantId))
        .executeTakeFirst(),
    );

  /** Ends tokens of the user (of one client, or all) and forgets them in the credential cache. */
  async function revokeTokensOf(userId: string, clientId?: string): Promise<number> {
    const revoked = await revokeArtifactsOf(deps.db, userId, clientId);
    await deps.credentials.invalidate(revoked.accessTokenHashes);
    return revoked.tokens;
  }

  /**
   * Disconnects a client from the user in one transaction: the consent goes, and every token, code and
   * grant the client holds for them (its next authorization asks again); the cached access tokens are
   * dropped after the commit. 404 when there was nothing (with `consentRequired`, no consent).
   */
  async function disconnect(
    request: FastifyRequest,
    userId: string,
    clientId: string,
    options: { consentRequired: boolean },
  ): Promise<void> {
    const { onCommit, committed } = afterCommit();
    await deps.db.transaction().execute(async (trx) => {
      const scopes = await consents.remove(userId, clientId, trx);
      if (!scopes && options.consentRequired) throw OAuthErrors.consent_not_found();
      const revoked = await revokeArtifactsOf(trx, userId, clientId);
      if (!scopes && !revoked.artifacts) throw OAuthErrors.app_not_connected();
      if (revoked.accessTokenHashes.length) onCommit(() => deps.credentials.invalidate(revoked.accessTokenHashes));
      await deps.audit.record(
        request,
        {
          eventType: 'consent_revoked',
          userId,
          actorId: userId,
          resourceType: 'oauth_client',
          resourceId: clientId,
          metadata: { scopes: scopes ?? [], tokens_revoked: revoked.tokens },
        },
        trx,
      );
    });
    await committed();
  }

  /** At most once a minute, off the request path: a new key set (a rotation on any node) rebuilds the provider. */
  function checkKeysNow(): void {
    if (!provider || deps.clock.nowMs() - keysCheckedAt < KEY_CHECK_INTERVAL_MS) return;
    keysCheckedAt = deps.clock.nowMs();
    keySetVersion(deps.db, deps.clock).then(
      (version) => {
        if (version !== keysVersion) provider = undefined;
      },
      () => undefined,
    );
  }

  return {
    provider(): Promise<Provider> {
      checkKeysNow();
      provider ??= make().catch((err: unknown) => {
        provider = undefined;
        throw err;
      });
      return provider;
    },

    /** After a permission was created: the next use rebuilds the provider, which then offers it as a scope. */
    forgetProvider(): void {
      provider = undefined;
    },

    claimsOf,

    /** A user's consents with each client's name (null once the client is inactive), for their data export. */
    async consentsOf(userId: string) {
      const rows = await consents.ofUser(userId);
      return Promise.all(
        rows.map(async (row) => ({
          ...row,
          client_name: (await deps.clients.activeClient(row.client_id))?.name ?? null,
        })),
      );
    },

    /**
     * Ends every OAuth token, code and grant of the user and the provider's browser sessions, in the
     * caller's transaction (a ban, a deletion, a password reset); consents stay. The cached access tokens
     * are dropped after the commit.
     */
    async revokeAllOfUser(
      userId: string,
      trx: Kysely<Schema>,
      onCommit: (task: () => Promise<void>) => void,
    ): Promise<number> {
      const revoked = await revokeArtifactsOf(trx, userId);
      if (revoked.accessTokenHashes.length) onCommit(() => deps.credentials.invalidate(revoked.accessTokenHashes));
      return revoked.tokens;
    },
    activeClient: deps.clients.activeClient,

    /** Ends every token, code and grant of the client, for every user. */
    async revokeClient(clientId: string): Promise<void> {
      await deps.credentials.invalidate(await revokeArtifactsOfClient(deps.db, clientId));
    },
    revokeTokensOf,
    accessTokenHashesOf: (userId: string) => accessTokenHashesOf(deps.db, userId),

    /** Records what the user allowed a third-party client, in the transaction the grant is saved after. */
    async recordConsent(request: FastifyRequest, userId: string, clientId: string, scopes: string[]): Promise<void> {
      await deps.db.transaction().execute(async (trx) => {
        const all = await consents.add(userId, clientId, scopes, trx);
        await deps.audit.record(
          request,
          {
            eventType: 'consent_granted',
            userId,
            actorId: userId,
            resourceType: 'oauth_client',
            resourceId: clientId,
            metadata: { scopes: all, added: scopes },
          },
          trx,
        );
      });
    },

    /**
     * POST /v1/oauth/revoke: withdraws the consent and ends every token the client holds for the user
     * (`disconnect`, which answers 404 here when there was no consent).
     */
    async revokeConsent(request: FastifyRequest, caller: Caller, clientId: string): Promise<void> {
      const userId = caller.userId;
      if (!userId || caller.kind !== 'session') throw OAuthErrors.user_context_required();
      await disconnect(request, userId, clientId, { consentRequired: true });
    },

    /**
     * GET /v1/users/me/connected-apps: every client holding a grant or a consent of the caller, most
     * recently used first, with its name, what it may do and when it last got a token.
     */
    async connectedAppsOf(caller: Caller) {
      const userId = userOf(caller);
      const [consented, held] = await Promise.all([consents.ofUser(userId), holdingsOf(deps.db, userId, deps.clock)]);
      const clientIds = [...new Set([...consented.map((row) => row.client_id), ...held.keys()])];
      const apps = await Promise.all(
        clientIds.map(async (clientId) => {
          const consent = consented.find((row) => row.client_id === clientId);
          const holding = held.get(clientId);
          const client = await deps.clients.activeClient(clientId);
          return {
            client_id: clientId,
            client_name: client?.name ?? null,
            is_first_party: client?.is_first_party ?? false,
            scopes: [...new Set([...(consent?.scopes ?? []), ...(holding?.scopes ?? [])])].sort(),
            consented_at: consent?.granted_at ?? null,
            last_used_at: holding?.lastUsedAt ?? null,
          };
        }),
      );
      const usedMs = (app: { last_used_at: Date | null }) => app.last_used_at?.getTime() ?? 0;
      return apps.sort((a, b) => usedMs(b) - usedMs(a) || (a.client_name ?? '').localeCompare(b.client_name ?? ''));
    },

    /** DELETE /v1/users/me/connected-apps/{client_id}: as POST /v1/oauth/revoke, also for an app holding a grant without consent (first-party). */
    async disconnectApp(request: FastifyRequest, caller: Caller, clientId: string): Promise<void> {
      await disconnect(request, userOf(caller), clientId, { consentRequired: false });
    },

    /**
     * Credential lookup for the resolver: the caller an access token stands for, or null. It acts for
     * its user within the permission scopes granted: the user's permissions at each request, cut to them.
     */
    async lookup(tokenHash: string): Promise<Caller | null> {
      const row = await deps.db
        .selectFrom('oauth_artifacts')
        .select(['payload', 'expires_at'])
        .where('model', '=', 'AccessToken')
        .where('id', '=', tokenHash)
        .where('expires_at', '>', deps.clock.now())
        .executeTakeFirst();
      const userId = row?.payload.accountId;
      if (
        !row ||
        typeof userId !== 'string' ||
        !(await grantExists(String(row.payload.grantId))) ||
        !(await claimsOf(userId))
      )
        return null;
      const client = await deps.clients.activeClient(String(row.payload.clientId));
      if (!client) return null;
      // What the client may still ask for bounds what it was granted.
      const granted = String(row.payload.scope ?? '')
        .split(' ')
        .filter((scope) => client.allowed_scopes.includes(scope) && !OIDC_SCOPES.includes(scope));
      const access = await deps.access.accessOfUser(userId);
      return {
        kind: 'oauth_token',
        userId,
        apiKeyId: null,
        sessionId: null,
        permissions: granted,
        // No roles: handing out a role is checked against the caller's roles, and a token holds none.
        roles: [],
        isSystem: false,
        isSuperAdmin: false,
        provider: null,
        expiresAt: row.expires_at!.getTime(),
        ownerPermissions: access.isSuperAdmin ? null : access.permissions,
      };
    },

    purgeExpired: () => purgeExpiredArtifacts(deps.db, deps.clock),
    /** At shutdown: resolves once every token being saved is committed; later saves are refused. */
    stop: () => writer.close(),
    retireSupersededKeys: () => retireSupersededKeys(deps.db, deps.clock),
    /** `waygate oauth rotate-signing-key`: the new key signs once every node has had time to publish it. */
    rotateSigningKey: () => rotateSigningKey(deps.db, deps.secretBox, deps.clock),
    forgetSigningKeys,
  };
}

export type OAuthService = ReturnType<typeof createOAuthService>;
