import { Validator } from '@seriousme/openapi-schema-validator';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bearer,
  buildTestApp,
  createApiKey,
  createUser,
  forbidden,
  UNAUTHORIZED,
  UNKNOWN_ID,
  type TestApp,
} from '../../../test/helpers.js';
import { unzip } from '../../../test/archives.js';
import { startFakeStreamingProvider, type FakeStreamingProvider } from '../../../test/fakes/streaming-provider.js';
import { STATE_TTL_MS, type TwitchOptions } from './service.js';

/** A test app with Twitch pointing at `twitch` (or not configured). */
const buildIntegrationsApp = (twitch?: TwitchOptions): Promise<TestApp> =>
  buildTestApp({ config: { integrations: { twitch }, corsOrigins: ['https://app.example.org'] } });

const twitchOf = (fake: FakeStreamingProvider): TwitchOptions => ({
  clientId: fake.clientId,
  clientSecret: fake.clientSecret,
  authUrl: fake.authUrl,
  apiUrl: fake.apiUrl,
});
const refreshesOf = (fake: FakeStreamingProvider) =>
  fake.calls.filter((c) => c === 'POST /oauth2/token refresh_token').length;
const RETURN_TO = 'https://app.example.org/settings/integrations?tab=streaming';
const CALLBACK = 'http://localhost/v1/integrations/callback/twitch';
type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** HTTP helpers bound to one test app. */
function client(app: () => TestApp) {
  const call = (method: Method, url: string, token?: string, payload?: object) =>
    app().app.inject({ method, url, headers: token ? bearer(token) : {}, ...(payload ? { payload } : {}) });
  async function startConnect(token: string, body: object = {}) {
    const response = await call('POST', '/v1/integrations/platform/twitch/connect', token, {
      redirect_uri: RETURN_TO,
      ...body,
    });
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as { authorization_url: string; state: string };
  }
  /** The browser at the platform: it consents (or refuses) and is sent back to the callback, whose path and query this returns. */
  async function consent(authorizationUrl: string): Promise<string> {
    const response = await fetch(authorizationUrl, { redirect: 'manual' });
    expect(response.status).toBe(302);
    const back = new URL(response.headers.get('location')!);
    expect(back.origin + back.pathname).toBe(CALLBACK);
    return back.pathname + back.search;
  }
  const callback = (path: string) => app().app.inject({ method: 'GET', url: path });
  /** The query of the URL the callback sent the browser to. */
  function outcomeOf(response: LightMyRequestResponse): Record<string, string> {
    expect(response.statusCode, response.body).toBe(302);
    const location = new URL(response.headers.location as string);
    expect(location.origin + location.pathname).toBe('https://app.example.org/settings/integrations');
    return Object.fromEntries(location.searchParams);
  }
  async function connect(token: string): Promise<string> {
    const outcome = outcomeOf(await callback(await consent((await startConnect(token)).authorization_url)));
    expect(outcome).toMatchObject({ status: 'connected', platform: 'twitch' });
    return outcome.integration_id!;
  }
  return { call, startConnect, consent, callback, outcomeOf, connect };
}

describe('integrations with Twitch', () => {
  let fake: FakeStreamingProvider;
  let t: TestApp;
  beforeAll(async () => {
    fake = await startFakeStreamingProvider();
    t = await buildIntegrationsApp(twitchOf(fake));
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });
  const { call, startConnect, consent, callback, outcomeOf, connect } = client(() => t);
  const auditOf = (id: string) =>
    t.database.db
      .selectFrom('audit_events')
      .select(['event_type', 'resource_type', 'metadata'])
      .where('resource_id', '=', id)
      .orderBy('created_at')
      .execute();
  /** Moves the app's clock for one step and back, so no other test sees it. */
  async function later<T>(ms: number, step: () => Promise<T>): Promise<T> {
    t.clock.advance(ms);
    try {
      return await step();
    } finally {
      t.clock.advance(-ms);
    }
  }

  it('connects an account end to end: connect, consent at the platform, callback; the integration is listed', async () => {
    const user = await createUser(t.app);
    const { authorization_url, state } = await startConnect(user.token, { scopes: ['user:read:chat'] });
    const authorize = new URL(authorization_url);
    expect(authorize.origin + authorize.pathname).toBe(`${fake.authUrl}/authorize`);
    expect(Object.fromEntries(authorize.searchParams)).toEqual({
      response_type: 'code',
      force_verify: 'true',
      client_id: fake.clientId,
      redirect_uri: CALLBACK,
      scope: 'channel:read:subscriptions user:read:chat',
      state,
    });

    const response = await callback(await consent(authorization_url));
    expect(response.headers['cache-control']).toBe('no-store');
    const outcome = outcomeOf(response);
    expect(outcome).toEqual({
      tab: 'streaming',
      status: 'connected',
      integration_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      platform: 'twitch',
    });

    const streamer = fake.streamers.at(-1)!;
    const integration = {
      id: outcome.integration_id,
      user_id: user.id,
      platform_slug: 'twitch',
      platform_name: 'Twitch',
      platform_user_id: streamer.id,
      username: streamer.login,
      display_name: streamer.display_name,
      profile_image_url: streamer.profile_image_url,
      scopes: ['channel:read:subscriptions', 'user:read:chat'],
      is_active: true,
      bot_status: 'active',
      connected_at: expect.any(String),
      last_refreshed_at: null,
    };
    expect((await call('GET', '/v1/integrations', user.token)).json()).toEqual([integration]);
    expect((await call('GET', '/v1/integrations/platform/twitch', user.token)).json()).toEqual([integration]);
    expect((await call('GET', `/v1/integrations/${outcome.integration_id}`, user.token)).json()).toEqual(integration);

    // The tokens are stored sealed: not readable in the row, and the secret box gives back what the platform issued.
    const row = await t.database.db
      .selectFrom('integrations')
      .selectAll()
      .where('id', '=', outcome.integration_id!)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toMatch(/"(at|rt)_/);
    expect(t.app.services.secretBox.open(row.access_token_sealed)).toMatch(/^at_/);
    expect(t.app.services.secretBox.open(row.refresh_token_sealed!)).toMatch(/^rt_/);
    expect(await auditOf(outcome.integration_id!)).toEqual([
      {
        event_type: 'account_linked',
        resource_type: 'integration',
        metadata: { platform: 'twitch', platform_user_id: streamer.id, username: streamer.login },
      },
    ]);
  });

  it('connecting again keeps the integration and its bot status and takes the new account', async () => {
    const user = await createUser(t.app);
    const id = await connect(user.token);
    expect(
      (await call('PATCH', `/v1/integrations/${id}/stream-status`, user.token, { bot_status: 'paused' })).json(),
    ).toEqual({ success: true, bot_status: 'paused' });
    expect(await connect(user.token)).toBe(id);
    const integration = (await call('GET', `/v1/integrations/${id}`, user.token)).json();
    expect(integration).toMatchObject({
      bot_status: 'paused',
      username: fake.streamers.at(-1)!.login,
      is_active: true,
    });
    expect((await auditOf(id)).map((event) => event.event_type)).toEqual(['account_linked', 'account_reconnected']);
  });

  it('sends the browser back with access_denied when the user refuses at the platform', async () => {
    const user = await createUser(t.app);
    fake.denyNext = true;
    const outcome = outcomeOf(await callback(await consent((await startConnect(user.token)).authorization_url)));
    expect(outcome).toEqual({
      tab: 'streaming',
      status: 'error',
      error: 'integration.access_denied',
      platform: 'twitch',
    });
    expect((await call('GET', '/v1/integrations', user.token)).json()).toEqual([]);
  });

  it('refuses a state that is malformed, forged, not a state, or for another platform, with 400 and no redirect', async () => {
    const user = await createUser(t.app);
    const { state } = await startConnect(user.token);
    const forged = state.slice(0, -6) + (state.endsWith('AAAAAA') ? 'BBBBBB' : 'AAAAAA');
    const notAState = t.app.services.secretBox.seal(JSON.stringify({ u: user.id }));
    for (const bad of ['garbage', forged, notAState]) {
      const response = await callback(`/v1/integrations/callback/twitch?code=abc&state=${encodeURIComponent(bad)}`);
      expect({ status: response.statusCode, body: response.json(), location: response.headers.location }).toEqual({
        status: 400,
        body: {
          error: 'BadRequest',
          message: 'The state was not issued by this server',
          code: 'integration.invalid_state',
        },
        location: undefined,
      });
    }
    const elsewhere = await callback(`/v1/integrations/callback/youtube?code=abc&state=${encodeURIComponent(state)}`);
    expect({ status: elsewhere.statusCode, code: elsewhere.json().code }).toEqual({
      status: 404,
      code: 'integration.unknown_platform',
    });
    const missing = await callback('/v1/integrations/callback/twitch?code=abc');
    expect({ status: missing.statusCode, code: missing.json().code }).toEqual({
      status: 400,
      code: 'request.validation',
    });
  });

  it('accepts a state once: the same callback again is refused', async () => {
    const user = await createUser(t.app);
    const path = await consent((await startConnect(user.token)).authorization_url);
    expect(outcomeOf(await callback(path)).status).toBe('connected');
    const replayed = await callback(path);
    expect({ status: replayed.statusCode, body: replayed.json() }).toEqual({
      status: 400,
      body: {
        error: 'BadRequest',
        message: 'The state was already used; start the connection again',
        code: 'integration.invalid_state',
      },
    });
  });

  it('refuses a state after 10 minutes without exchanging the code', async () => {
    const user = await createUser(t.app);
    const path = await consent((await startConnect(user.token)).authorization_url);
    const exchanges = fake.calls.filter((c) => c === 'POST /oauth2/token authorization_code').length;
    const response = await later(STATE_TTL_MS + 1000, () => callback(path));
    expect({ status: response.statusCode, message: response.json().message }).toEqual({
      status: 400,
      message: 'The state has expired; start the connection again',
    });
    expect(fake.calls.filter((c) => c === 'POST /oauth2/token authorization_code').length).toBe(exchanges);
    expect((await call('GET', '/v1/integrations', user.token)).json()).toEqual([]);
  });

  it('sends the browser back with provider_error when the platform refuses the code', async () => {
    const user = await createUser(t.app);
    const { state } = await startConnect(user.token);
    const outcome = outcomeOf(
      await callback(`/v1/integrations/callback/twitch?code=not-a-code&state=${encodeURIComponent(state)}`),
    );
    expect(outcome).toEqual({
      tab: 'streaming',
      status: 'error',
      error: 'integration.provider_error',
      platform: 'twitch',
    });
  });

  it('reads the channel stats from the platform, live and offline', async () => {
    const user = await createUser(t.app);
    const id = await connect(user.token);
    const channel = fake.channel(fake.streamers.at(-1)!.id);
    Object.assign(channel, {
      followers: 1234,
      subscribers: 56,
      stream: { title: 'Sailing the Elbe', game_name: 'Just Chatting', viewer_count: 78 },
    });
    const live = await call('POST', `/v1/integrations/${id}/stats`, user.token);
    expect(live.json()).toEqual({
      success: true,
      stats: {
        followers: 1234,
        subscribers: 56,
        is_live: true,
        current_viewers: 78,
        stream_title: 'Sailing the Elbe',
        game_name: 'Just Chatting',
        updated_at: expect.any(String),
      },
    });
    channel.stream = null;
    expect((await call('POST', `/v1/integrations/${id}/stats`, user.token)).json().stats).toMatchObject({
      is_live: false,
      current_viewers: 0,
      stream_title: null,
      game_name: null,
    });
  });

  it('refreshes an expired access token on the way to the stats', async () => {
    const user = await createUser(t.app);
    const id = await connect(user.token);
    const before = refreshesOf(fake);
    const response = await later(fake.expiresInSecs * 1000, () =>
      call('POST', `/v1/integrations/${id}/stats`, user.token),
    );
    expect(response.statusCode, response.body).toBe(200);
    expect(refreshesOf(fake)).toBe(before + 1);
    expect((await call('GET', `/v1/integrations/${id}`, user.token)).json().last_refreshed_at).not.toBeNull();
  });

  it('refreshes once for overlapping calls, so a rotating refresh token is not spent twice and the integration stays active', async () => {
    const user = await createUser(t.app);
    const id = await connect(user.token);
    const before = refreshesOf(fake);
    const answers = await later(fake.expiresInSecs * 1000, () =>
      Promise.all([1, 2, 3].map(() => call('POST', `/v1/integrations/${id}/stats`, user.token))),
    );
    expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200, 200]);
    expect(refreshesOf(fake)).toBe(before + 1);
    expect((await call('GET', `/v1/integrations/${id}`, user.token)).json().is_active).toBe(true);
  });

  it('refreshes the access token when the platform answers 401, and tries again', async () => {
    const user = await createUser(t.app);
    const id = await connect(user.token);
    const before = refreshesOf(fake);
    fake.expireAccessTokens();
    const response = await call('POST', `/v1/integrations/${id}/stats`, user.token);
    expect(response.statusCode, response.body).toBe(200);
    expect(refreshesOf(fake)).toBe(before + 1);
  });

  it('refreshes on request and tells the new expiry', async () => {
    const user = await createUser(t.app);
    const id = await connect(user.token);
    const response = await call('POST', `/v1/integrations/${id}/refresh`, user.token);
    expect(response.json()).toEqual({
      success: true,
      message: 'Access token refreshed',
      expires_at: expect.any(String),
    });
    const ahead = Date.parse(response.json().expires_at) - t.clock.nowMs();
    expect(ahead).toBeGreaterThan(fake.expiresInSecs * 1000 - 60_000);
    expect(ahead).toBeLessThanOrEqual(fake.expiresInSecs * 1000);
  });

  it('makes the integration inactive when the platform refuses its refresh token, until connected again', async () => {
    const user = await createUser(t.app);
    const id = await connect(user.token);
    fake.revokeRefreshTokens();
    const refused = await call('POST', `/v1/integrations/${id}/refresh`, user.token);
    expect({ status: refused.statusCode, code: refused.json().code }).toEqual({
      status: 409,
      code: 'integration.reconnect_required',
    });
    expect((await call('GET', `/v1/integrations/${id}`, user.token)).json().is_active).toBe(false);
    const stats = await call('POST', `/v1/integrations/${id}/stats`, user.token);
    expect({ status: stats.statusCode, code: stats.json().code }).toEqual({
      status: 409,
      code: 'integration.reconnect_required',
    });
    expect(await connect(user.token)).toBe(id);
    expect((await call('GET', `/v1/integrations/${id}`, user.token)).json().is_active).toBe(true);
  });

  it('after a secrets reset (the key sealing its tokens lost) is inactive until connected again, and disconnects without a token to revoke', async () => {
    const own = await buildIntegrationsApp(twitchOf(fake));
    try {
      const { call: callOwn, connect: connectOwn } = client(() => own);
      const user = await createUser(own.app);
      const id = await connectOwn(user.token);
      const other = await createUser(own.app);
      const gone = await connectOwn(other.token);
      expect(
        await own.database.db.transaction().execute((trx) => own.app.services.integrations.forgetAllTokens(trx)),
      ).toBe(2);
      const rows = await own.database.db
        .selectFrom('integrations')
        .select(['access_token_sealed', 'refresh_token_sealed', 'is_active'])
        .execute();
      expect(rows).toEqual([
        { access_token_sealed: '', refresh_token_sealed: null, is_active: false },
        { access_token_sealed: '', refresh_token_sealed: null, is_active: false },
      ]);
      for (const path of [`/v1/integrations/${id}/refresh`, `/v1/integrations/${id}/stats`]) {
        const refused = await callOwn('POST', path, user.token);
        expect({ status: refused.statusCode, code: refused.json().code }, path).toEqual({
          status: 409,
          code: 'integration.reconnect_required',
        });
      }
      expect(await connectOwn(user.token)).toBe(id);
      expect((await callOwn('GET', `/v1/integrations/${id}`, user.token)).json().is_active).toBe(true);
      const revokedBefore = fake.revoked.length;
      const disconnected = await callOwn('DELETE', `/v1/integrations/${gone}`, other.token);
      expect(disconnected.json()).toEqual({ success: true, message: 'Disconnected from Twitch' });
      expect(fake.revoked.length).toBe(revokedBefore);
    } finally {
      await own.close();
    }
  });

  it('disconnects: revokes the token at the platform, deletes the integration and audits it', async () => {
    const user = await createUser(t.app);
    const id = await connect(user.token);
    const row = await t.database.db
      .selectFrom('integrations')
      .select('access_token_sealed')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    const response = await call('DELETE', `/v1/integrations/${id}`, user.token);
    expect(response.json()).toEqual({ success: true, message: 'Disconnected from Twitch' });
    expect(fake.revoked).toContain(t.app.services.secretBox.open(row.access_token_sealed));
    expect((await call('GET', `/v1/integrations/${id}`, user.token)).statusCode).toBe(404);
    expect((await auditOf(id)).map((event) => event.event_type)).toEqual(['account_linked', 'account_unlinked']);
  });

  it('keeps each integration to its owner: anybody else gets 404', async () => {
    const owner = await createUser(t.app);
    const other = await createUser(t.app);
    const id = await connect(owner.token);
    for (const [method, url, body] of [
      ['GET', `/v1/integrations/${id}`, undefined],
      ['DELETE', `/v1/integrations/${id}`, undefined],
      ['POST', `/v1/integrations/${id}/refresh`, undefined],
      ['POST', `/v1/integrations/${id}/stats`, undefined],
      ['PATCH', `/v1/integrations/${id}/stream-status`, { bot_status: 'disabled' }],
      ['GET', `/v1/integrations/${UNKNOWN_ID}`, undefined],
    ] as const) {
      const response = await call(method, url, other.token, body);
      expect({ method, url, status: response.statusCode, body: response.json() }).toEqual({
        method,
        url,
        status: 404,
        body: { error: 'NotFound', message: 'Integration not found', code: 'integration.not_found' },
      });
    }
    expect((await call('GET', '/v1/integrations', other.token)).json()).toEqual([]);
    expect((await call('GET', `/v1/integrations/${id}`, owner.token)).json().bot_status).toBe('active');
    expect((await call('GET', '/v1/integrations/not-a-uuid', owner.token)).statusCode).toBe(400);
    expect((await call('GET', '/v1/integrations')).json()).toEqual(UNAUTHORIZED);
  });

  // Issue 33: any key of a user connected, refreshed and deleted that user's integrations whatever its scopes.
  it('lets a key of the owner in only with integrations:read / integrations:write (the default user role has both)', async () => {
    const owner = await createUser(t.app, ['role_user', 'role_developer']);
    const id = await connect(owner.token);
    const keyWith = async (scopes: string[]) =>
      (await createApiKey(t.app, owner.token, { name: scopes.join(' ') || 'none', scopes })).key;
    const [none, reader, writer] = [
      await keyWith([]),
      await keyWith(['integrations:read']),
      await keyWith(['integrations:write']),
    ];
    const writes = [
      ['DELETE', `/v1/integrations/${id}`, undefined],
      ['POST', `/v1/integrations/${id}/refresh`, undefined],
      ['PATCH', `/v1/integrations/${id}/stream-status`, { bot_status: 'disabled' }],
      ['POST', '/v1/integrations/platform/twitch/connect', { redirect_uri: RETURN_TO }],
    ] as const;
    const reads = [
      ['GET', '/v1/integrations'],
      ['GET', `/v1/integrations/${id}`],
      ['POST', `/v1/integrations/${id}/stats`],
      ['GET', '/v1/integrations/platform/twitch'],
    ] as const;
    for (const [method, url, body] of writes) {
      for (const key of [none, reader])
        expect((await call(method, url, key, body)).json()).toEqual(forbidden('integrations:write'));
    }
    for (const [method, url] of reads) {
      for (const key of [none, writer])
        expect((await call(method, url, key)).json()).toEqual(forbidden('integrations:read'));
      expect((await call(method, url, reader)).statusCode).toBe(200);
    }
    expect(
      (await call('PATCH', `/v1/integrations/${id}/stream-status`, writer, { bot_status: 'paused' })).json(),
    ).toEqual({ success: true, bot_status: 'paused' });
  });

  it('is part of the personal data export and of GraphQL (myIntegrations), never with a token', async () => {
    const owner = await createUser(t.app);
    const id = await connect(owner.token);
    const sealed = await t.database.db
      .selectFrom('integrations')
      .select(['access_token_sealed', 'refresh_token_sealed'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    const exported = await call('GET', '/v1/user/export', owner.token);
    const text = (await unzip(exported.rawPayload)).get('data.json')!.toString('utf8');
    const username = fake.streamers.at(-1)!.login;
    expect(JSON.parse(text).integrations).toEqual([
      expect.objectContaining({ id, userId: owner.id, platformSlug: 'twitch', username, botStatus: 'active' }),
    ]);
    for (const secret of [sealed.access_token_sealed, sealed.refresh_token_sealed!]) expect(text).not.toContain(secret);
    // Neither the platform's tokens (at_…, rt_… from the fake) nor a field for them.
    expect(text).not.toMatch(/"(at|rt)_[A-Za-z0-9_-]{20}|accessToken|refreshToken|sealed/i);

    const query = '{ myIntegrations { id platformSlug username isActive botStatus connectedAt } }';
    const gql = (token: string) =>
      t.app.inject({ method: 'POST', url: '/v1/gql', headers: bearer(token), payload: { query } });
    expect((await gql(owner.token)).json()).toEqual({
      data: {
        myIntegrations: [
          {
            id,
            platformSlug: 'twitch',
            username,
            isActive: true,
            botStatus: 'active',
            connectedAt: expect.any(String),
          },
        ],
      },
    });
    const developer = await createUser(t.app, ['role_user', 'role_developer']);
    const scopeless = (await createApiKey(t.app, developer.token, { name: 'device', scopes: [] })).key;
    expect((await gql(scopeless)).json().errors).toEqual([
      expect.objectContaining({
        message: forbidden('integrations:read').message,
        extensions: expect.objectContaining({ code: 'auth.forbidden' }),
      }),
    ]);
  });

  it('sets the bot status to one of active, paused, disabled', async () => {
    const user = await createUser(t.app);
    const id = await connect(user.token);
    expect(
      (await call('PATCH', `/v1/integrations/${id}/stream-status`, user.token, { bot_status: 'disabled' })).json(),
    ).toEqual({ success: true, bot_status: 'disabled' });
    expect((await call('GET', `/v1/integrations/${id}`, user.token)).json().bot_status).toBe('disabled');
    const bad = await call('PATCH', `/v1/integrations/${id}/stream-status`, user.token, { bot_status: 'sleeping' });
    expect({ status: bad.statusCode, code: bad.json().code }).toEqual({ status: 400, code: 'request.validation' });
  });

  it('refuses a redirect_uri that is not an absolute http(s) URL on a known origin, and scopes the platform does not offer', async () => {
    const user = await createUser(t.app);
    for (const uri of [
      '/settings',
      'javascript:alert(1)',
      'https://app.example.org/cb#top',
      'https://me:pw@app.example.org/cb',
      'https://evil.example/cb',
    ]) {
      const response = await call('POST', '/v1/integrations/platform/twitch/connect', user.token, {
        redirect_uri: uri,
      });
      expect({ uri, status: response.statusCode, code: response.json().code }).toEqual({
        uri,
        status: 400,
        code: 'integration.invalid_redirect_uri',
      });
    }
    const scope = await call('POST', '/v1/integrations/platform/twitch/connect', user.token, {
      redirect_uri: RETURN_TO,
      scopes: ['channel:moderate'],
    });
    expect({ status: scope.statusCode, code: scope.json().code }).toEqual({
      status: 400,
      code: 'integration.unknown_scope',
    });
    expect(scope.json().message).toContain('channel:moderate');
    const unknown = await call('POST', '/v1/integrations/platform/youtube/connect', user.token, {
      redirect_uri: RETURN_TO,
    });
    expect({ status: unknown.statusCode, code: unknown.json().code }).toEqual({
      status: 404,
      code: 'integration.unknown_platform',
    });
  });

  it('lists the platforms and the scopes of each', async () => {
    const user = await createUser(t.app);
    expect((await call('GET', '/v1/integrations/platforms', user.token)).json()).toEqual({
      platforms: [
        {
          slug: 'twitch',
          name: 'Twitch',
          description: expect.any(String),
          icon_url: null,
          enabled: true,
          features: expect.arrayContaining(['followers', 'subscribers']),
        },
      ],
    });
    const scopes = (await call('GET', '/v1/integrations/platform/twitch/scopes', user.token)).json();
    expect(scopes.platform).toBe('twitch');
    expect(scopes.scopes).toContainEqual({
      name: 'channel:read:subscriptions',
      description: expect.any(String),
      required: true,
    });
    expect(scopes.scopes.filter((s: { required: boolean }) => !s.required).length).toBeGreaterThan(0);
    expect((await call('GET', '/v1/integrations/platform/youtube/scopes', user.token)).json().code).toBe(
      'integration.unknown_platform',
    );
    expect((await call('GET', '/v1/integrations/platform/youtube', user.token)).json().code).toBe(
      'integration.unknown_platform',
    );
  });

  it('documents every route in the OpenAPI document, all but the callback with bearer security', async () => {
    const document = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    expect((await new Validator().validate(document)).errors ?? []).toEqual([]);
    const { paths } = document;
    const routes = [
      ['get', '/v1/integrations'],
      ['get', '/v1/integrations/platform/{slug}'],
      ['get', '/v1/integrations/{id}'],
      ['post', '/v1/integrations/platform/{slug}/connect'],
      ['delete', '/v1/integrations/{id}'],
      ['post', '/v1/integrations/{id}/refresh'],
      ['post', '/v1/integrations/{id}/stats'],
      ['patch', '/v1/integrations/{id}/stream-status'],
      ['get', '/v1/integrations/platform/{slug}/scopes'],
      ['get', '/v1/integrations/platforms'],
    ] as const;
    const gaps = routes
      .filter(([method, path]) => !(paths[path]?.[method]?.security as unknown[] | undefined)?.length)
      .map(([method, path]) => `${method} ${path}`);
    expect(gaps).toEqual([]);
    const callbackRoute = paths['/v1/integrations/callback/{platform}'].get;
    expect(callbackRoute.security).toEqual([]);
    expect(callbackRoute.responses['400']['x-error-codes']).toContain('integration.invalid_state');
    expect(paths['/v1/integrations/{id}/stats'].post.responses['502']['x-error-codes']).toEqual([
      'integration.provider_unavailable',
      'integration.provider_error',
    ]);
  });
});

describe('integrations without a configured platform', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildIntegrationsApp();
  });
  afterAll(() => t?.close());
  const { call } = client(() => t);

  it('lists Twitch as disabled and refuses to connect it', async () => {
    const user = await createUser(t.app);
    expect((await call('GET', '/v1/integrations/platforms', user.token)).json().platforms).toEqual([
      expect.objectContaining({ slug: 'twitch', enabled: false }),
    ]);
    const response = await call('POST', '/v1/integrations/platform/twitch/connect', user.token, {
      redirect_uri: RETURN_TO,
    });
    expect({ status: response.statusCode, body: response.json() }).toEqual({
      status: 409,
      body: {
        error: 'Conflict',
        message: 'Twitch integrations are not enabled on this server',
        code: 'integration.platform_not_configured',
      },
    });
    expect((await call('GET', '/v1/integrations/platform/twitch/scopes', user.token)).statusCode).toBe(200);
  });
});

describe('integrations when the platform cannot be reached', () => {
  let fake: FakeStreamingProvider;
  let t: TestApp;
  /** Two users with an integration each: one to read through, one to disconnect, so the tests here share nothing they change. */
  let reader: { token: string; id: string };
  let leaver: { token: string; id: string };
  const { call, startConnect, outcomeOf, connect, callback } = client(() => t);
  beforeAll(async () => {
    fake = await startFakeStreamingProvider();
    t = await buildIntegrationsApp(twitchOf(fake));
    const [first, second] = [await createUser(t.app), await createUser(t.app)];
    reader = { token: first.token, id: await connect(first.token) };
    leaver = { token: second.token, id: await connect(second.token) };
    // Nothing listens on its port any more.
    await fake.close();
  });
  afterAll(() => t?.close());

  it('answers 502 provider_unavailable for stats and refresh', async () => {
    for (const action of ['stats', 'refresh']) {
      const response = await call('POST', `/v1/integrations/${reader.id}/${action}`, reader.token);
      expect({ action, status: response.statusCode, body: response.json() }).toEqual({
        action,
        status: 502,
        body: {
          error: 'BadGateway',
          message: 'The platform could not be reached; try again shortly',
          code: 'integration.provider_unavailable',
        },
      });
    }
  });

  it('sends the browser back with provider_unavailable when the code cannot be exchanged', async () => {
    const { state } = await startConnect(reader.token);
    const outcome = outcomeOf(
      await callback(`/v1/integrations/callback/twitch?code=abc&state=${encodeURIComponent(state)}`),
    );
    expect(outcome).toMatchObject({ status: 'error', error: 'integration.provider_unavailable' });
  });

  it('still disconnects: revoking at the platform is best effort', async () => {
    const response = await call('DELETE', `/v1/integrations/${leaver.id}`, leaver.token);
    expect(response.json()).toEqual({ success: true, message: 'Disconnected from Twitch' });
    expect((await call('GET', '/v1/integrations', leaver.token)).json()).toEqual([]);
  });
});
