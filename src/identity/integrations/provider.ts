import type { FastifyBaseLogger } from 'fastify';
import { IntegrationErrors } from './errors.js';

/** A platform that does not answer within this long counts as unavailable (the request is someone's page load). */
const TIMEOUT_MS = 10_000;

export interface TwitchOptions {
  clientId: string;
  clientSecret: string;
  /** Base of the OAuth endpoints authorize, token and revoke (https://id.twitch.tv/oauth2). */
  authUrl: string;
  /** Base of the Helix API (https://api.twitch.tv/helix). */
  apiUrl: string;
}

export interface PlatformInfo {
  slug: string;
  name: string;
  description: string;
  icon_url: string | null;
  features: string[];
  /** Required scopes are always asked for; the others on request. */
  scopes: { name: string; description: string; required: boolean }[];
}

export const TWITCH: PlatformInfo = {
  slug: 'twitch',
  name: 'Twitch',
  description: 'Live streaming: channel profile, follower and subscriber counts, live status, and the stream bot',
  icon_url: null,
  features: ['profile', 'followers', 'subscribers', 'live_status', 'stream_bot'],
  scopes: [
    {
      name: 'channel:read:subscriptions',
      description: "Read the channel's subscriptions (the subscriber count of the stats)",
      required: true,
    },
    {
      name: 'moderator:read:followers',
      description: 'Read the list of followers (the follower count needs no scope)',
      required: false,
    },
    { name: 'user:read:chat', description: 'Read the chat of your channel as you (stream bot)', required: false },
    { name: 'user:write:chat', description: 'Send chat messages as you (stream bot)', required: false },
    { name: 'channel:manage:broadcast', description: 'Change the stream title and category', required: false },
    { name: 'user:read:email', description: 'Read the email address of the account', required: false },
  ],
};

export interface TokenSet {
  accessToken: string;
  refreshToken: string | null;
  expiresInSecs: number | null;
  scopes: string[];
}

export interface Profile {
  id: string;
  login: string;
  displayName: string;
  profileImageUrl: string | null;
}

export interface ChannelSnapshot {
  followers: number;
  /** null: the subscriptions scope was not granted, or the channel has no subscription programme. */
  subscribers: number | null;
  isLive: boolean;
  currentViewers: number;
  streamTitle: string | null;
  gameName: string | null;
}

/** Helix answered 401: the access token is no longer good (expired or revoked); a refresh may help. */
export class TokenRejected extends Error {}
/** The token endpoint refused the refresh token (revoked, or the app was disconnected at Twitch). */
export class GrantRejected extends Error {}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : null);
const count = (value: unknown) =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : null;

/**
 * Twitch's OAuth endpoints and the Helix calls the integrations need. Failures become the module's 502
 * errors (provider_unavailable: no answer, 5xx or rate-limited; provider_error: a refusal or a body of
 * the wrong shape); the platform's own error bodies are logged by status only and never passed on.
 */
export function createTwitchClient(options: TwitchOptions, log: FastifyBaseLogger) {
  async function send(call: string, url: string, init: RequestInit): Promise<{ status: number; body: unknown }> {
    let status: number;
    let raw: string;
    try {
      const response = await fetch(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(TIMEOUT_MS) });
      status = response.status;
      raw = await response.text();
    } catch (err) {
      log.warn({ err, call }, 'streaming platform unreachable');
      throw IntegrationErrors.provider_unavailable();
    }
    if (status >= 500 || status === 429) {
      log.warn({ call, status }, 'streaming platform unavailable');
      throw IntegrationErrors.provider_unavailable();
    }
    try {
      return { status, body: raw ? JSON.parse(raw) : null };
    } catch {
      return { status, body: null };
    }
  }

  function refused(call: string, status: number): never {
    log.warn({ call, status }, 'streaming platform refused a request');
    throw IntegrationErrors.provider_error();
  }

  async function tokenRequest(params: Record<string, string>): Promise<{ status: number; tokens: TokenSet | null }> {
    const { status, body } = await send(`POST /token ${params.grant_type}`, `${options.authUrl}/token`, {
      method: 'POST',
      headers: { accept: 'application/json' },
      body: new URLSearchParams({ client_id: options.clientId, client_secret: options.clientSecret, ...params }),
    });
    if (status !== 200 || !isObject(body) || !text(body.access_token)) return { status, tokens: null };
    // Twitch sends the granted scopes as an array; other OAuth servers as one space-separated string.
    const scope = Array.isArray(body.scope)
      ? body.scope.filter((s): s is string => typeof s === 'string')
      : (text(body.scope)?.split(' ') ?? []);
    return {
      status,
      tokens: {
        accessToken: body.access_token as string,
        refreshToken: text(body.refresh_token),
        expiresInSecs: count(body.expires_in),
        scopes: scope,
      },
    };
  }

  async function helix(
    path: string,
    accessToken: string,
    query: Record<string, string>,
  ): Promise<{ status: number; body: unknown }> {
    const url = new URL(`${options.apiUrl}/${path}`);
    for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
    const answer = await send(`GET /${path}`, url.href, {
      headers: { authorization: `Bearer ${accessToken}`, 'client-id': options.clientId, accept: 'application/json' },
    });
    if (answer.status === 401) throw new TokenRejected();
    return answer;
  }

  function okBody(call: string, { status, body }: { status: number; body: unknown }): Json {
    if (status !== 200 || !isObject(body)) refused(call, status);
    return body;
  }

  return {
    authorizationUrl(input: { redirectUri: string; scopes: string[]; state: string }): string {
      const url = new URL(`${options.authUrl}/authorize`);
      url.search = new URLSearchParams({
        response_type: 'code',
        client_id: options.clientId,
        redirect_uri: input.redirectUri,
        scope: input.scopes.join(' '),
        state: input.state,
        // Twitch otherwise skips its consent screen for an account that authorised the app before: a link
        // to someone else's authorization URL would then link the clicker's account to them unasked.
        force_verify: 'true',
      }).toString();
      return url.href;
    },

    /** The authorization code for tokens; `redirectUri` must be the one the authorization used. */
    async exchangeCode(code: string, redirectUri: string): Promise<TokenSet> {
      const { status, tokens } = await tokenRequest({
        grant_type: 'authorization_code',
        code,
        redirect_uri: redirectUri,
      });
      return tokens ?? refused('POST /token authorization_code', status);
    },

    async refresh(refreshToken: string): Promise<TokenSet> {
      const { status, tokens } = await tokenRequest({ grant_type: 'refresh_token', refresh_token: refreshToken });
      // 400 is Twitch's "Invalid refresh token"; a 401/403 would be our client credentials, not the user's grant.
      if (status === 400) throw new GrantRejected();
      return tokens ?? refused('POST /token refresh_token', status);
    },

    async revoke(token: string): Promise<void> {
      const { status } = await send('POST /revoke', `${options.authUrl}/revoke`, {
        method: 'POST',
        body: new URLSearchParams({ client_id: options.clientId, token }),
      });
      if (status !== 200) refused('POST /revoke', status);
    },

    /** The account the access token belongs to. */
    async profile(accessToken: string): Promise<Profile> {
      const data = okBody('GET /users', await helix('users', accessToken, {})).data;
      const user = Array.isArray(data) ? (data[0] as unknown) : undefined;
      if (!isObject(user) || !text(user.id) || !text(user.login)) refused('GET /users', 200);
      const login = user.login as string;
      return {
        id: user.id as string,
        login,
        displayName: text(user.display_name) ?? login,
        profileImageUrl: text(user.profile_image_url),
      };
    },

    /** Follower and subscriber counts and the live stream, in parallel. */
    async channel(accessToken: string, broadcasterId: string, withSubscriptions: boolean): Promise<ChannelSnapshot> {
      const [followers, subscriptions, streams] = await Promise.all([
        helix('channels/followers', accessToken, { broadcaster_id: broadcasterId, first: '1' }),
        // Without the scope Twitch answers 401, which would read as an expired token: not asked at all.
        withSubscriptions
          ? helix('subscriptions', accessToken, { broadcaster_id: broadcasterId, first: '1' })
          : undefined,
        helix('streams', accessToken, { user_id: broadcasterId, type: 'live' }),
      ]);
      const followerCount = count(okBody('GET /channels/followers', followers).total);
      if (followerCount === null) refused('GET /channels/followers', 200);
      // A channel without a subscription programme (not affiliate or partner) is refused with a 4xx: no count.
      const subscriberCount =
        subscriptions?.status === 200 && isObject(subscriptions.body) ? count(subscriptions.body.total) : null;
      const streamData = okBody('GET /streams', streams).data;
      const stream = Array.isArray(streamData)
        ? (streamData as unknown[]).find((s) => isObject(s) && s.type === 'live')
        : undefined;
      const live = isObject(stream) ? stream : null;
      return {
        followers: followerCount,
        subscribers: subscriberCount,
        isLive: live !== null,
        currentViewers: (live && count(live.viewer_count)) ?? 0,
        streamTitle: live && text(live.title),
        gameName: live && text(live.game_name),
      };
    },
  };
}

export type TwitchClient = ReturnType<typeof createTwitchClient>;
