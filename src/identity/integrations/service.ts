import { randomBytes } from 'node:crypto';
import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { AuditWriter } from '../../platform/audit.js';
import { requireOwnAccount } from '../../platform/auth/hooks.js';
import type { Clock } from '../../platform/clock.js';
import type { Schema } from '../../platform/db/schema/index.js';
import type { IntegrationBotStatus } from '../../platform/db/schema/index.js';
import { AppError, quoted } from '../../platform/http/errors.js';
import type { DurableStore, KeyValueStore } from '../../platform/kv/index.js';
import type { SecretBox } from '../../platform/secret-box.js';
import { IntegrationErrors } from './errors.js';
import {
  createTwitchClient,
  GrantRejected,
  TokenRejected,
  TWITCH,
  type PlatformInfo,
  type Profile,
  type TokenSet,
  type TwitchClient,
  type TwitchOptions,
} from './provider.js';
import { createIntegrationsRepo, FORGOTTEN, type IntegrationRow } from './repo.js';
import type { CallbackQuery, ConnectInput } from './schemas.js';

export type { TwitchOptions } from './provider.js';

/** A connection must be completed at the platform within this long after connect. */
export const STATE_TTL_MS = 10 * 60 * 1000;

/**
 * Who may read and change a user's integrations, on REST and GraphQL: their session, or an API key or app
 * token holding these (the default user role has both, so a user may put them on a key of their own).
 */
export const READ_INTEGRATIONS = requireOwnAccount('integrations:read');
export const WRITE_INTEGRATIONS = requireOwnAccount('integrations:write');
/** A token this close to its expiry is refreshed before use rather than refused half-way. */
const EXPIRY_MARGIN_MS = 60 * 1000;
/** How long a node may hold an integration's refresh lock (longer than a platform's answer takes), and how often a waiting one looks. */
const REFRESH_LOCK_SECS = 15;
const REFRESH_LOCK_POLL_MS = 50;
/** Marks a sealed value as a state of this module: the secret box also seals tokens and other secrets. */
const STATE_KIND = 'integration_state';

/** A platform without options is listed as disabled and refuses connections. */
export interface IntegrationOptions {
  twitch?: TwitchOptions;
  /**
   * Origins a browser may be sent back to after connecting (PUBLIC_URL and CORS_ORIGINS). Empty: any,
   * for a development setup with neither configured; otherwise the callback is no open redirect.
   */
  returnOrigins?: string[];
}

interface Deps {
  db: Kysely<Schema>;
  kv: Pick<KeyValueStore, 'setIfAbsent' | 'delete'>;
  /** Where a used state's nonce is kept until the state expires: it must outlive a restart (Redis, or the database). */
  durable: Pick<DurableStore, 'setIfAbsent'>;
  clock: Clock;
  secretBox: Pick<SecretBox, 'seal' | 'open'>;
  audit: AuditWriter;
  log: FastifyBaseLogger;
  options: IntegrationOptions;
}

/** What a state carries through the platform: nonce, user, platform, where the browser returns, the callback URL used, expiry. */
interface State {
  t: typeof STATE_KIND;
  n: string;
  u: string;
  p: string;
  r: string;
  c: string;
  e: number;
}

const isState = (value: unknown): value is State => {
  const s = value as Partial<State> | null;
  return (
    s?.t === STATE_KIND &&
    [s.n, s.u, s.p, s.r, s.c].every((part) => typeof part === 'string') &&
    typeof s.e === 'number'
  );
};

/**
 * Where the browser returns after the platform: an absolute http(s) URL, without credentials or a
 * fragment, on one of `allowedOrigins` when any are given.
 */
export function checkedRedirectUri(value: string, allowedOrigins: string[] = []): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw IntegrationErrors.invalid_redirect_uri('redirect_uri is not an absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw IntegrationErrors.invalid_redirect_uri('redirect_uri must use http or https');
  if (url.username || url.password || value.includes('#')) throw IntegrationErrors.invalid_redirect_uri();
  if (allowedOrigins.length > 0 && !allowedOrigins.includes(url.origin)) {
    throw IntegrationErrors.invalid_redirect_uri(
      `redirect_uri must be on one of: ${allowedOrigins.join(', ')} (PUBLIC_URL, CORS_ORIGINS)`,
    );
  }
  return url.href;
}

/**
 * Per-user connections to streaming platforms (Twitch): OAuth authorization code flow through a sealed,
 * expiring, single-use state; the platform's tokens are kept sealed and refreshed on the way when they
 * have expired. A user sees and acts on their own integrations only; others' are not found.
 */
export function createIntegrationsService(deps: Deps) {
  const repo = createIntegrationsRepo(deps.db);
  const platforms: PlatformInfo[] = [TWITCH];
  const clients = new Map<string, TwitchClient>();
  if (deps.options.twitch) clients.set(TWITCH.slug, createTwitchClient(deps.options.twitch, deps.log));

  function platformOf(slug: string): PlatformInfo {
    const platform = platforms.find((p) => p.slug === slug);
    if (!platform) throw IntegrationErrors.unknown_platform();
    return platform;
  }

  function clientOf(slug: string): TwitchClient {
    const client = clients.get(slug);
    if (!client)
      throw IntegrationErrors.platform_not_configured(
        `${platformOf(slug).name} integrations are not enabled on this server`,
      );
    return client;
  }

  const view = (row: IntegrationRow) => ({
    id: row.id,
    user_id: row.user_id,
    platform_slug: row.platform_slug,
    platform_name: platforms.find((p) => p.slug === row.platform_slug)?.name ?? row.platform_slug,
    platform_user_id: row.platform_user_id,
    username: row.username,
    display_name: row.display_name,
    profile_image_url: row.profile_image_url,
    scopes: row.scopes,
    is_active: row.is_active,
    bot_status: row.bot_status,
    connected_at: row.connected_at,
    last_refreshed_at: row.last_refreshed_at,
  });

  async function owned(userId: string, id: string) {
    const row = await repo.withTokens(id);
    if (!row || row.user_id !== userId) throw IntegrationErrors.not_found();
    return row;
  }
  type OwnedRow = Awaited<ReturnType<typeof owned>>;

  /** Sealed with the secret box: authenticated (nobody can forge or alter one) and unreadable to the platform. */
  function issueState(userId: string, platform: string, redirectUri: string, callbackUrl: string): string {
    const state: State = {
      t: STATE_KIND,
      n: randomBytes(16).toString('base64url'),
      u: userId,
      p: platform,
      r: redirectUri,
      c: callbackUrl,
      e: deps.clock.nowMs() + STATE_TTL_MS,
    };
    return deps.secretBox.seal(JSON.stringify(state));
  }

  /** The state's content, once: the first claim in the durable store wins, on every node and across restarts. */
  async function claimState(sealed: string, platform: string): Promise<State> {
    let state: unknown;
    try {
      state = JSON.parse(deps.secretBox.open(sealed));
    } catch {
      state = undefined;
    }
    if (!isState(state)) throw IntegrationErrors.invalid_state('The state was not issued by this server');
    if (state.p !== platform) throw IntegrationErrors.invalid_state('The state was issued for another platform');
    const leftMs = state.e - deps.clock.nowMs();
    if (leftMs <= 0) throw IntegrationErrors.invalid_state('The state has expired; start the connection again');
    if (!(await deps.durable.setIfAbsent(`integrations:state:${state.n}`, '1', Math.ceil(leftMs / 1000) + 1))) {
      throw IntegrationErrors.invalid_state('The state was already used; start the connection again');
    }
    return state;
  }

  function scopesFor(platform: PlatformInfo, requested: string[]): string[] {
    const unknown = requested.find((name) => !platform.scopes.some((scope) => scope.name === name));
    if (unknown !== undefined) {
      throw IntegrationErrors.unknown_scope(
        `Scope "${quoted(unknown)}" is not offered for ${platform.name}; see GET /v1/integrations/platform/${platform.slug}/scopes`,
      );
    }
    return platform.scopes
      .filter((scope) => scope.required || requested.includes(scope.name))
      .map((scope) => scope.name);
  }

  const sealedTokens = (tokens: TokenSet, now: Date) => ({
    access_token_sealed: deps.secretBox.seal(tokens.accessToken),
    refresh_token_sealed: tokens.refreshToken === null ? null : deps.secretBox.seal(tokens.refreshToken),
    token_expires_at: tokens.expiresInSecs === null ? null : new Date(now.getTime() + tokens.expiresInSecs * 1000),
  });

  async function store(request: FastifyRequest, userId: string, platform: string, tokens: TokenSet, profile: Profile) {
    const now = deps.clock.now();
    return deps.db.transaction().execute(async (trx) => {
      const existed = await repo.exists(userId, platform, trx);
      const row = await repo.upsert(
        {
          user_id: userId,
          platform_slug: platform,
          platform_user_id: profile.id,
          username: profile.login,
          display_name: profile.displayName,
          profile_image_url: profile.profileImageUrl,
          scopes: tokens.scopes,
          ...sealedTokens(tokens, now),
          connected_at: now,
        },
        trx,
      );
      await deps.audit.record(
        request,
        {
          eventType: existed ? 'account_reconnected' : 'account_linked',
          userId,
          actorId: userId,
          resourceType: 'integration',
          resourceId: row.id,
          metadata: { platform, platform_user_id: profile.id, username: profile.login },
        },
        trx,
      );
      return row;
    });
  }

  /**
   * Refreshes in flight, by integration: overlapping calls share one (a rotating platform would refuse
   * the second use of a refresh token and the integration would be wrongly deactivated). Per process;
   * across nodes the refresh lock in the shared store does the same (see refreshOnce).
   */
  const refreshing = new Map<string, Promise<{ accessToken: string; expiresAt: Date | null }>>();

  function refreshTokens(row: OwnedRow): Promise<{ accessToken: string; expiresAt: Date | null }> {
    let pending = refreshing.get(row.id);
    if (!pending) {
      pending = refreshOnce(row).finally(() => refreshing.delete(row.id));
      refreshing.set(row.id, pending);
    }
    return pending;
  }

  /**
   * One refresh at a time across nodes: a node that finds the lock taken waits for it, and then uses the
   * tokens the other node stored instead of spending the refresh token again. Without it the second node's
   * refresh was refused and, reading the row before the first had stored the successor, deactivated it.
   */
  async function refreshOnce(row: OwnedRow): Promise<{ accessToken: string; expiresAt: Date | null }> {
    const release = await refreshLock(row.id);
    try {
      const current = await repo.withTokens(row.id);
      if (current?.is_active && current.access_token_sealed !== row.access_token_sealed) {
        return { accessToken: deps.secretBox.open(current.access_token_sealed), expiresAt: current.token_expires_at };
      }
      return await refreshWith(current ?? row);
    } finally {
      await release();
    }
  }

  /** Takes the integration's refresh lock (waiting while another node holds it); resolves with its release. */
  async function refreshLock(id: string): Promise<() => Promise<void>> {
    const key = `integrations:refreshing:${id}`;
    const acquire = () => deps.kv.setIfAbsent(key, '1', REFRESH_LOCK_SECS).catch(() => true); // store down: one node's guard only
    // Past the lock's life its holder is gone (it expires in the store then too).
    for (let waited = 0; !(await acquire()) && waited < REFRESH_LOCK_SECS * 1000; waited += REFRESH_LOCK_POLL_MS) {
      await new Promise((resolve) => setTimeout(resolve, REFRESH_LOCK_POLL_MS));
    }
    return () => deps.kv.delete(key).catch(() => undefined);
  }

  /** New tokens from the refresh token; one the platform refuses deactivates the integration (connect again). */
  async function refreshWith(row: OwnedRow): Promise<{ accessToken: string; expiresAt: Date | null }> {
    const client = clientOf(row.platform_slug);
    if (!row.is_active || row.refresh_token_sealed === null) throw IntegrationErrors.reconnect_required();
    let tokens: TokenSet;
    try {
      tokens = await client.refresh(deps.secretBox.open(row.refresh_token_sealed));
    } catch (err) {
      if (!(err instanceof GrantRejected)) throw err;
      // Another node may have used this refresh token a moment ago and stored its successor.
      const current = await repo.withTokens(row.id);
      if (current && current.refresh_token_sealed !== row.refresh_token_sealed) return refreshWith(current);
      await repo.deactivate(row.id, deps.clock.now());
      throw IntegrationErrors.reconnect_required();
    }
    const now = deps.clock.now();
    const sealed = sealedTokens(tokens, now);
    // A refresh answer without a refresh token leaves the current one in force.
    await repo.updateTokens(
      row.id,
      {
        ...sealed,
        refresh_token_sealed: sealed.refresh_token_sealed ?? row.refresh_token_sealed,
        last_refreshed_at: now,
      },
      now,
    );
    return { accessToken: tokens.accessToken, expiresAt: sealed.token_expires_at };
  }

  /** Calls the platform with a good access token: refreshed first when (nearly) expired, or once after a 401. */
  async function withAccessToken<T>(row: OwnedRow, call: (accessToken: string) => Promise<T>): Promise<T> {
    if (!row.is_active) throw IntegrationErrors.reconnect_required();
    const expired =
      row.token_expires_at !== null && row.token_expires_at.getTime() - EXPIRY_MARGIN_MS <= deps.clock.nowMs();
    try {
      return await call(
        expired ? (await refreshTokens(row)).accessToken : deps.secretBox.open(row.access_token_sealed),
      );
    } catch (err) {
      if (!(err instanceof TokenRejected)) throw err;
      // A token refreshed a moment ago and refused all the same: the platform is at fault, not the grant.
      if (expired) throw IntegrationErrors.provider_error();
    }
    try {
      return await call((await refreshTokens(row)).accessToken);
    } catch (err) {
      throw err instanceof TokenRejected ? IntegrationErrors.provider_error() : err;
    }
  }

  return {
    platforms: () => ({
      platforms: platforms.map(({ slug, name, description, icon_url, features }) => ({
        slug,
        name,
        description,
        icon_url,
        enabled: clients.has(slug),
        features,
      })),
    }),

    scopes: (slug: string) => ({ platform: slug, scopes: platformOf(slug).scopes }),

    async list(userId: string, platformSlug?: string) {
      if (platformSlug !== undefined) platformOf(platformSlug);
      return (await repo.listOfUser(userId, platformSlug)).map(view);
    },

    get: async (userId: string, id: string) => view(await owned(userId, id)),

    /** The platform's authorization URL; `callbackUrl` is this server's callback, where the platform sends the browser. */
    connect(userId: string, platformSlug: string, input: ConnectInput, callbackUrl: string) {
      const platform = platformOf(platformSlug);
      const client = clientOf(platformSlug);
      const redirectUri = checkedRedirectUri(input.redirect_uri, deps.options.returnOrigins);
      const scopes = scopesFor(platform, input.scopes ?? []);
      const state = issueState(userId, platformSlug, redirectUri, callbackUrl);
      return { authorization_url: client.authorizationUrl({ redirectUri: callbackUrl, scopes, state }), state };
    },

    /**
     * The platform's redirect back: the state is checked and spent, then the outcome goes back to the
     * connect's redirect_uri (the returned Location) as `status=connected&integration_id=…` or
     * `status=error&error=<code>`. A state that does not pass is an error here: nothing vouches for its redirect_uri.
     */
    async completeConnection(request: FastifyRequest, platformSlug: string, query: CallbackQuery): Promise<string> {
      platformOf(platformSlug);
      const state = await claimState(query.state, platformSlug);
      const back = (outcome: Record<string, string>) => {
        const url = new URL(state.r);
        for (const [name, value] of Object.entries({ ...outcome, platform: platformSlug }))
          url.searchParams.set(name, value);
        return url.href;
      };
      const failed = (code: string) => back({ status: 'error', error: code });
      // The platform's own error text is not passed on: only whether the user said no.
      if (query.error !== undefined)
        return failed(
          query.error === 'access_denied'
            ? IntegrationErrors.access_denied.code
            : IntegrationErrors.provider_error.code,
        );
      if (!query.code) return failed(IntegrationErrors.provider_error.code);
      try {
        const client = clientOf(platformSlug);
        const tokens = await client.exchangeCode(query.code, state.c);
        const profile = await client.profile(tokens.accessToken);
        const row = await store(request, state.u, platformSlug, tokens, profile);
        return back({ status: 'connected', integration_id: row.id });
      } catch (err) {
        if (err instanceof TokenRejected) return failed(IntegrationErrors.provider_error.code);
        if (err instanceof AppError) return failed(err.code);
        throw err;
      }
    },

    async refresh(userId: string, id: string) {
      const { expiresAt } = await refreshTokens(await owned(userId, id));
      return { success: true, message: 'Access token refreshed', expires_at: expiresAt };
    },

    async stats(userId: string, id: string) {
      const row = await owned(userId, id);
      const client = clientOf(row.platform_slug);
      const withSubscriptions = row.scopes.includes('channel:read:subscriptions');
      const channel = await withAccessToken(row, (token) =>
        client.channel(token, row.platform_user_id, withSubscriptions),
      );
      return {
        success: true,
        stats: {
          followers: channel.followers,
          subscribers: channel.subscribers,
          is_live: channel.isLive,
          current_viewers: channel.currentViewers,
          stream_title: channel.streamTitle,
          game_name: channel.gameName,
          updated_at: deps.clock.now(),
        },
      };
    },

    async setBotStatus(userId: string, id: string, status: IntegrationBotStatus) {
      await owned(userId, id);
      await repo.setBotStatus(id, status, deps.clock.now());
      return { success: true, bot_status: status };
    },

    /** Revokes the token at the platform (best effort: the connection goes even when it cannot be told), then deletes it. */
    async disconnect(request: FastifyRequest, userId: string, id: string) {
      const row = await owned(userId, id);
      const client = clients.get(row.platform_slug);
      if (client && row.access_token_sealed !== FORGOTTEN) {
        try {
          await client.revoke(deps.secretBox.open(row.access_token_sealed));
        } catch (err) {
          deps.log.warn({ err, integration_id: id }, 'could not revoke the token of a disconnected integration');
        }
      }
      await deps.db.transaction().execute(async (trx) => {
        await repo.delete(id, trx);
        await deps.audit.record(
          request,
          {
            eventType: 'account_unlinked',
            userId,
            actorId: userId,
            resourceType: 'integration',
            resourceId: id,
            metadata: { platform: row.platform_slug, platform_user_id: row.platform_user_id, username: row.username },
          },
          trx,
        );
      });
      return { success: true, message: `Disconnected from ${view(row).platform_name}` };
    },

    /** `waygate secrets reset`: every integration's tokens are sealed with a lost key; each is deactivated (connect again). */
    forgetAllTokens: (trx: Kysely<Schema>) => repo.forgetAllTokens(deps.clock.now(), trx),
  };
}

export type IntegrationsService = ReturnType<typeof createIntegrationsService>;
