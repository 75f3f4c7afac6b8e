import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeStreamer {
  id: string;
  login: string;
  display_name: string;
  profile_image_url: string;
}

export interface FakeChannel {
  followers: number;
  subscribers: number;
  stream: { title: string; game_name: string; viewer_count: number } | null;
}

interface Grant {
  user: FakeStreamer;
  scopes: string[];
}

export interface FakeStreamingProvider {
  clientId: string;
  clientSecret: string;
  /** As INTEGRATION_TWITCH_AUTH_URL takes it (…/oauth2). */
  authUrl: string;
  /** As INTEGRATION_TWITCH_API_URL takes it (…/helix). */
  apiUrl: string;
  /** Calls received, e.g. `POST /oauth2/token refresh_token`, `GET /helix/users`. */
  calls: string[];
  /** Access tokens revoked through /oauth2/revoke. */
  revoked: string[];
  /** Every authorization makes a new streamer, in order. */
  streamers: FakeStreamer[];
  /** The next authorization is refused by the user (error=access_denied). */
  denyNext: boolean;
  /** expires_in of the access tokens issued. */
  expiresInSecs: number;
  /** The channel of a streamer (followers, subscribers, the live stream), made on first use. */
  channel(streamerId: string): FakeChannel;
  /** Every access token issued so far stops working (Helix answers 401); refresh tokens still work. */
  expireAccessTokens(): void;
  /** Every refresh token issued so far stops working (the token endpoint answers 400). */
  revokeRefreshTokens(): void;
  close(): Promise<void>;
}

/**
 * A local stand-in for Twitch speaking its wire formats: the OAuth endpoints under /oauth2 (authorize
 * redirects at once, as if the user consented; token with authorization_code and refresh_token grants,
 * form-encoded; revoke) and the Helix calls under /helix (users, channels/followers, subscriptions,
 * streams) with Authorization: Bearer and Client-Id, answering 401 for tokens it does not accept.
 */
export async function startFakeStreamingProvider(): Promise<FakeStreamingProvider> {
  const codes = new Map<string, { grant: Grant; redirectUri: string }>();
  const accessTokens = new Map<string, Grant>();
  const refreshTokens = new Map<string, Grant>();
  const channels = new Map<string, FakeChannel>();
  const fake: FakeStreamingProvider = {
    clientId: 'fake-client-id',
    clientSecret: 'fake-client-secret',
    authUrl: '',
    apiUrl: '',
    calls: [],
    revoked: [],
    streamers: [],
    denyNext: false,
    expiresInSecs: 14_400,
    channel(streamerId) {
      let channel = channels.get(streamerId);
      if (!channel) channels.set(streamerId, (channel = { followers: 0, subscribers: 0, stream: null }));
      return channel;
    },
    expireAccessTokens: () => accessTokens.clear(),
    revokeRefreshTokens: () => refreshTokens.clear(),
    close: async () => {},
  };
  const token = (prefix: string) => `${prefix}${randomBytes(15).toString('base64url')}`;

  function issue(grant: Grant) {
    const access = token('at_');
    const refresh = token('rt_');
    accessTokens.set(access, grant);
    refreshTokens.set(refresh, grant);
    return {
      access_token: access,
      expires_in: fake.expiresInSecs,
      refresh_token: refresh,
      scope: grant.scopes,
      token_type: 'bearer',
    };
  }

  function authorize(url: URL, response: ServerResponse) {
    const q = url.searchParams;
    const redirectUri = q.get('redirect_uri');
    if (q.get('response_type') !== 'code' || q.get('client_id') !== fake.clientId || !redirectUri || !q.get('state')) {
      return json(response, 400, { status: 400, message: 'invalid request' });
    }
    const back = new URL(redirectUri);
    back.searchParams.set('state', q.get('state')!);
    if (fake.denyNext) {
      fake.denyNext = false;
      back.searchParams.set('error', 'access_denied');
      back.searchParams.set('error_description', 'The user denied you access');
    } else {
      const n = fake.streamers.length + 1;
      const user = {
        id: String(141_981_700 + n),
        login: `streamer_${n}`,
        display_name: `Streamer_${n}`,
        profile_image_url: `https://static-cdn.example/streamer_${n}.png`,
      };
      fake.streamers.push(user);
      const code = token('code_');
      const scopes = (q.get('scope') ?? '').split(' ').filter(Boolean);
      codes.set(code, { grant: { user, scopes }, redirectUri });
      back.searchParams.set('code', code);
      back.searchParams.set('scope', scopes.join(' '));
    }
    response.writeHead(302, { location: back.href }).end();
  }

  function tokenEndpoint(form: URLSearchParams, response: ServerResponse) {
    if (form.get('client_id') !== fake.clientId || form.get('client_secret') !== fake.clientSecret) {
      return json(response, 403, { status: 403, message: 'invalid client secret' });
    }
    if (form.get('grant_type') === 'authorization_code') {
      const pending = codes.get(form.get('code') ?? '');
      codes.delete(form.get('code') ?? '');
      if (!pending || pending.redirectUri !== form.get('redirect_uri'))
        return json(response, 400, { status: 400, message: 'Invalid authorization code' });
      return json(response, 200, issue(pending.grant));
    }
    if (form.get('grant_type') === 'refresh_token') {
      const grant = refreshTokens.get(form.get('refresh_token') ?? '');
      if (!grant) return json(response, 400, { error: 'Bad Request', status: 400, message: 'Invalid refresh token' });
      refreshTokens.delete(form.get('refresh_token')!);
      return json(response, 200, issue(grant));
    }
    json(response, 400, { status: 400, message: 'missing grant_type' });
  }

  function helix(path: string, q: URLSearchParams, grant: Grant, response: ServerResponse) {
    const { user } = grant;
    if (path === 'users') {
      return json(response, 200, {
        data: [
          {
            ...user,
            type: '',
            broadcaster_type: 'affiliate',
            description: '',
            offline_image_url: '',
            view_count: 0,
            created_at: '2016-12-14T20:32:28Z',
          },
        ],
      });
    }
    const channel = fake.channel(q.get('broadcaster_id') ?? q.get('user_id') ?? '');
    if (path === 'channels/followers') {
      if (!q.get('broadcaster_id'))
        return json(response, 400, {
          error: 'Bad Request',
          status: 400,
          message: 'Missing required parameter "broadcaster_id"',
        });
      return json(response, 200, { total: channel.followers, data: [], pagination: {} });
    }
    if (path === 'subscriptions') {
      if (!grant.scopes.includes('channel:read:subscriptions'))
        return json(response, 401, {
          error: 'Unauthorized',
          status: 401,
          message: 'Missing scope: channel:read:subscriptions',
        });
      if (q.get('broadcaster_id') !== user.id)
        return json(response, 403, { error: 'Forbidden', status: 403, message: 'broadcaster_id must match the token' });
      return json(response, 200, { data: [], total: channel.subscribers, points: channel.subscribers, pagination: {} });
    }
    if (path === 'streams') {
      const stream = channel.stream;
      const data = stream
        ? [
            {
              id: '40952121085',
              user_id: q.get('user_id'),
              user_login: user.login,
              user_name: user.display_name,
              game_id: '509658',
              game_name: stream.game_name,
              type: 'live',
              title: stream.title,
              tags: [],
              viewer_count: stream.viewer_count,
              started_at: '2021-03-10T15:04:21Z',
              language: 'en',
              thumbnail_url: 'https://static-cdn.example/live.jpg',
              is_mature: false,
            },
          ]
        : [];
      return json(response, 200, { data, pagination: {} });
    }
    json(response, 404, { error: 'Not Found', status: 404, message: 'no such endpoint' });
  }

  const server = createServer(async (request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    let raw = '';
    for await (const chunk of request) raw += chunk;
    const form = new URLSearchParams(raw);
    fake.calls.push(`${request.method} ${url.pathname}${form.get('grant_type') ? ` ${form.get('grant_type')}` : ''}`);
    if (request.method === 'GET' && url.pathname === '/oauth2/authorize') return authorize(url, response);
    if (request.method === 'POST' && url.pathname === '/oauth2/token') return tokenEndpoint(form, response);
    if (request.method === 'POST' && url.pathname === '/oauth2/revoke') {
      if (form.get('client_id') !== fake.clientId || !accessTokens.delete(form.get('token') ?? ''))
        return json(response, 400, { status: 400, message: 'Invalid token' });
      fake.revoked.push(form.get('token')!);
      return response.writeHead(200).end();
    }
    if (request.method === 'GET' && url.pathname.startsWith('/helix/')) {
      const bearer = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1];
      const grant = bearer ? accessTokens.get(bearer) : undefined;
      if (!grant || request.headers['client-id'] !== fake.clientId)
        return json(response, 401, { error: 'Unauthorized', status: 401, message: 'Invalid OAuth token' });
      return helix(url.pathname.slice('/helix/'.length), url.searchParams, grant, response);
    }
    json(response, 404, { status: 404, message: 'Not Found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.authUrl = `${base}/oauth2`;
  fake.apiUrl = `${base}/helix`;
  fake.close = () =>
    new Promise((resolve) => {
      server.close(() => resolve());
      // Kept-alive connections of the client would keep the port answering.
      server.closeAllConnections();
    });
  return fake;
}

function json(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}
