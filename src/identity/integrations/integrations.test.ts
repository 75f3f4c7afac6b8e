import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unchecked, type RawAnswer, type RequestBody } from '../../../test/client.js';
import {
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

/** The steps of connecting an account, bound to one test app. */
function flows(app: () => TestApp) {
  async function startConnect(
    token: string,
    body: Partial<RequestBody<'post', '/v1/integrations/platform/twitch/connect'>> = {},
  ) {
    const response = await app()
      .as(token)
      .post('/v1/integrations/platform/twitch/connect', { redirect_uri: RETURN_TO, ...body })
      .expect(200);
    return response.body;
  }
  /** The browser at the platform: it consents (or refuses) and is sent back to the callback, whose path and query this returns. */
  async function consent(authorizationUrl: string): Promise<string> {
    const response = await fetch(authorizationUrl, { redirect: 'manual' });
    expect(response.status).toBe(302);
    const back = new URL(response.headers.get('location')!);
    expect(back.origin + back.pathname).toBe(CALLBACK);
    return back.pathname + back.search;
  }
  /** The browser arriving at the callback with the path and query the platform sent it to. */
  const callback = (path: string) => app().as(null).raw({ method: 'GET', url: path });
  /** The query of the URL the callback sent the browser to. */
  function outcomeOf(response: RawAnswer): Record<string, string> {
    expect(response.status, response.text).toBe(302);
    const location = new URL(response.headers.location as string);
    expect(location.origin + location.pathname).toBe('https://app.example.org/settings/integrations');
    return Object.fromEntries(location.searchParams);
  }
  async function connect(token: string): Promise<string> {
    const outcome = outcomeOf(await callback(await consent((await startConnect(token)).authorization_url)));
    expect(outcome).toMatchObject({ status: 'connected', platform: 'twitch' });
    return outcome.integration_id!;
  }
  return { startConnect, consent, callback, outcomeOf, connect };
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
  const { startConnect, consent, callback, outcomeOf, connect } = flows(() => t);
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
    expect((await t.as(user.token).get('/v1/integrations')).body).toEqual([integration]);
    expect((await t.as(user.token).get('/v1/integrations/platform/twitch')).body).toEqual([integration]);
    expect((await t.as(user.token).get(`/v1/integrations/${outcome.integration_id}`)).body).toEqual(integration);

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
      (await t.as(user.token).patch(`/v1/integrations/${id}/stream-status`, { bot_status: 'paused' })).body,
    ).toEqual({ success: true, bot_status: 'paused' });
    expect(await connect(user.token)).toBe(id);
    const integration = (await t.as(user.token).get(`/v1/integrations/${id}`)).body;
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
    expect((await t.as(user.token).get('/v1/integrations')).body).toEqual([]);
  });

  it('refuses a state that is malformed, forged, not a state, or for another platform, with 400 and no redirect', async () => {
    const user = await createUser(t.app);
    const { state } = await startConnect(user.token);
    const forged = state.slice(0, -6) + (state.endsWith('AAAAAA') ? 'BBBBBB' : 'AAAAAA');
    const notAState = t.app.services.secretBox.seal(JSON.stringify({ u: user.id }));
    for (const bad of ['garbage', forged, notAState]) {
      const response = await callback(`/v1/integrations/callback/twitch?code=abc&state=${encodeURIComponent(bad)}`);
      expect({ status: response.status, body: response.body, location: response.headers.location }).toEqual({
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
    expect({ status: elsewhere.status, code: elsewhere.body.code }).toEqual({
      status: 404,
      code: 'integration.unknown_platform',
    });
    const missing = await callback('/v1/integrations/callback/twitch?code=abc');
    expect({ status: missing.status, code: missing.body.code }).toEqual({
      status: 400,
      code: 'request.validation',
    });
  });

  it('accepts a state once: the same callback again is refused', async () => {
    const user = await createUser(t.app);
    const path = await consent((await startConnect(user.token)).authorization_url);
    expect(outcomeOf(await callback(path)).status).toBe('connected');
    const replayed = await callback(path);
    expect({ status: replayed.status, body: replayed.body }).toEqual({
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
    expect({ status: response.status, message: response.body.message }).toEqual({
      status: 400,
      message: 'The state has expired; start the connection again',
    });
    expect(fake.calls.filter((c) => c === 'POST /oauth2/token authorization_code').length).toBe(exchanges);
    expect((await t.as(user.token).get('/v1/integrations')).body).toEqual([]);
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
    const live = await t.as(user.token).post(`/v1/integrations/${id}/stats`);
    expect(live.body).toEqual({
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
    expect((await t.as(user.token).post(`/v1/integrations/${id}/stats`).expect(200)).body.stats).toMatchObject({
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
      t.as(user.token).post(`/v1/integrations/${id}/stats`),
    );
    expect(response.status, response.text).toBe(200);
    expect(refreshesOf(fake)).toBe(before + 1);
    expect((await t.as(user.token).get(`/v1/integrations/${id}`).expect(200)).body.last_refreshed_at).not.toBeNull();
  });

  it('refreshes once for overlapping calls, so a rotating refresh token is not spent twice and the integration stays active', async () => {
    const user = await createUser(t.app);
    const id = await connect(user.token);
    const before = refreshesOf(fake);
    const answers = await later(fake.expiresInSecs * 1000, () =>
      Promise.all([1, 2, 3].map(() => t.as(user.token).post(`/v1/integrations/${id}/stats`))),
    );
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
    expect(refreshesOf(fake)).toBe(before + 1);
    expect((await t.as(user.token).get(`/v1/integrations/${id}`).expect(200)).body.is_active).toBe(true);
  });

  it('refreshes the access token when the platform answers 401, and tries again', async () => {
    const user = await createUser(t.app);
    const id = await connect(user.token);
    const before = refreshesOf(fake);
    fake.expireAccessTokens();
    await t.as(user.token).post(`/v1/integrations/${id}/stats`).expect(200);
    expect(refreshesOf(fake)).toBe(before + 1);
  });

  it('refreshes on request and tells the new expiry', async () => {
    const user = await createUser(t.app);
    const id = await connect(user.token);
    const response = await t.as(user.token).post(`/v1/integrations/${id}/refresh`).expect(200);
    expect(response.body).toEqual({
      success: true,
      message: 'Access token refreshed',
      expires_at: expect.any(String),
    });
    const ahead = Date.parse(response.body.expires_at!) - t.clock.nowMs();
    expect(ahead).toBeGreaterThan(fake.expiresInSecs * 1000 - 60_000);
    expect(ahead).toBeLessThanOrEqual(fake.expiresInSecs * 1000);
  });

  it('makes the integration inactive when the platform refuses its refresh token, until connected again', async () => {
    const user = await createUser(t.app);
    const id = await connect(user.token);
    fake.revokeRefreshTokens();
    const refused = await t.as(user.token).post(`/v1/integrations/${id}/refresh`).expect(409);
    expect(refused.body.code).toBe('integration.reconnect_required');
    expect((await t.as(user.token).get(`/v1/integrations/${id}`).expect(200)).body.is_active).toBe(false);
    const stats = await t.as(user.token).post(`/v1/integrations/${id}/stats`).expect(409);
    expect(stats.body.code).toBe('integration.reconnect_required');
    expect(await connect(user.token)).toBe(id);
    expect((await t.as(user.token).get(`/v1/integrations/${id}`).expect(200)).body.is_active).toBe(true);
  });

  it('after a secrets reset (the key sealing its tokens lost) is inactive until connected again, and disconnects without a token to revoke', async () => {
    const own = await buildIntegrationsApp(twitchOf(fake));
    try {
      const { connect: connectOwn } = flows(() => own);
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
        const refused = await own.as(user.token).raw({ method: 'POST', url: path });
        expect({ status: refused.status, code: refused.body.code }, path).toEqual({
          status: 409,
          code: 'integration.reconnect_required',
        });
      }
      expect(await connectOwn(user.token)).toBe(id);
      expect((await own.as(user.token).get(`/v1/integrations/${id}`).expect(200)).body.is_active).toBe(true);
      const revokedBefore = fake.revoked.length;
      const disconnected = await own.as(other.token).delete(`/v1/integrations/${gone}`);
      expect(disconnected.body).toEqual({ success: true, message: 'Disconnected from Twitch' });
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
    const response = await t.as(user.token).delete(`/v1/integrations/${id}`);
    expect(response.body).toEqual({ success: true, message: 'Disconnected from Twitch' });
    expect(fake.revoked).toContain(t.app.services.secretBox.open(row.access_token_sealed));
    expect((await t.as(user.token).get(`/v1/integrations/${id}`)).status).toBe(404);
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
      const response = await t.as(other.token).raw({ method, url, payload: body });
      expect({ method, url, status: response.status, body: response.body }).toEqual({
        method,
        url,
        status: 404,
        body: { error: 'NotFound', message: 'Integration not found', code: 'integration.not_found' },
      });
    }
    expect((await t.as(other.token).get('/v1/integrations')).body).toEqual([]);
    expect((await t.as(owner.token).get(`/v1/integrations/${id}`).expect(200)).body.bot_status).toBe('active');
    expect((await t.as(owner.token).get('/v1/integrations/not-a-uuid')).status).toBe(400);
    expect((await t.as(null).get('/v1/integrations')).body).toEqual(UNAUTHORIZED);
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
        expect((await t.as(key).raw({ method, url, payload: body })).body).toEqual(forbidden('integrations:write'));
    }
    for (const [method, url] of reads) {
      for (const key of [none, writer])
        expect((await t.as(key).raw({ method, url })).body).toEqual(forbidden('integrations:read'));
      expect((await t.as(reader).raw({ method, url })).status).toBe(200);
    }
    expect((await t.as(writer).patch(`/v1/integrations/${id}/stream-status`, { bot_status: 'paused' })).body).toEqual({
      success: true,
      bot_status: 'paused',
    });
  });

  it('is part of the personal data export and of GraphQL (myIntegrations), never with a token', async () => {
    const owner = await createUser(t.app);
    const id = await connect(owner.token);
    const sealed = await t.database.db
      .selectFrom('integrations')
      .select(['access_token_sealed', 'refresh_token_sealed'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    const exported = await t.as(owner.token).get('/v1/user/export');
    const text = (await unzip(exported.bytes)).get('data.json')!.toString('utf8');
    const username = fake.streamers.at(-1)!.login;
    expect(JSON.parse(text).integrations).toEqual([
      expect.objectContaining({ id, userId: owner.id, platformSlug: 'twitch', username, botStatus: 'active' }),
    ]);
    for (const secret of [sealed.access_token_sealed, sealed.refresh_token_sealed!]) expect(text).not.toContain(secret);
    // Neither the platform's tokens (at_…, rt_… from the fake) nor a field for them.
    expect(text).not.toMatch(/"(at|rt)_[A-Za-z0-9_-]{20}|accessToken|refreshToken|sealed/i);

    const query = '{ myIntegrations { id platformSlug username isActive botStatus connectedAt } }';
    const gql = (token: string) => t.as(token).post('/v1/gql', { query }).expect(200);
    expect((await gql(owner.token)).body).toEqual({
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
    expect((await gql(scopeless)).body.errors).toEqual([
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
      (await t.as(user.token).patch(`/v1/integrations/${id}/stream-status`, { bot_status: 'disabled' })).body,
    ).toEqual({ success: true, bot_status: 'disabled' });
    expect((await t.as(user.token).get(`/v1/integrations/${id}`).expect(200)).body.bot_status).toBe('disabled');
    const bad = await t
      .as(user.token)
      .patch(`/v1/integrations/${id}/stream-status`, unchecked({ bot_status: 'sleeping' }))
      .expect(400);
    expect(bad.body.code).toBe('request.validation');
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
      const response = await t.as(user.token).post('/v1/integrations/platform/twitch/connect', { redirect_uri: uri });
      expect({ uri, status: response.status, body: response.body }).toMatchObject({
        uri,
        status: 400,
        body: { code: 'integration.invalid_redirect_uri' },
      });
    }
    const scope = await t
      .as(user.token)
      .post('/v1/integrations/platform/twitch/connect', { redirect_uri: RETURN_TO, scopes: ['channel:moderate'] })
      .expect(400);
    expect(scope.body.code).toBe('integration.unknown_scope');
    expect(scope.body.message).toContain('channel:moderate');
    const unknown = await t
      .as(user.token)
      .post('/v1/integrations/platform/youtube/connect', { redirect_uri: RETURN_TO })
      .expect(404);
    expect(unknown.body.code).toBe('integration.unknown_platform');
  });

  it('lists the platforms and the scopes of each', async () => {
    const user = await createUser(t.app);
    expect((await t.as(user.token).get('/v1/integrations/platforms')).body).toEqual({
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
    const scopes = (await t.as(user.token).get('/v1/integrations/platform/twitch/scopes').expect(200)).body;
    expect(scopes.platform).toBe('twitch');
    expect(scopes.scopes).toContainEqual({
      name: 'channel:read:subscriptions',
      description: expect.any(String),
      required: true,
    });
    expect(scopes.scopes.filter((s) => !s.required).length).toBeGreaterThan(0);
    expect((await t.as(user.token).get('/v1/integrations/platform/youtube/scopes').expect(404)).body.code).toBe(
      'integration.unknown_platform',
    );
    expect((await t.as(user.token).get('/v1/integrations/platform/youtube').expect(404)).body.code).toBe(
      'integration.unknown_platform',
    );
  });

  it('documents every route in the OpenAPI document, all but the callback with bearer security', async () => {
    const document = (await t.as(null).raw({ method: 'GET', url: '/v1/openapi.json' })).body;
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

  it('lists Twitch as disabled and refuses to connect it', async () => {
    const user = await createUser(t.app);
    expect((await t.as(user.token).get('/v1/integrations/platforms').expect(200)).body.platforms).toEqual([
      expect.objectContaining({ slug: 'twitch', enabled: false }),
    ]);
    const response = await t
      .as(user.token)
      .post('/v1/integrations/platform/twitch/connect', { redirect_uri: RETURN_TO });
    expect({ status: response.status, body: response.body }).toEqual({
      status: 409,
      body: {
        error: 'Conflict',
        message: 'Twitch integrations are not enabled on this server',
        code: 'integration.platform_not_configured',
      },
    });
    expect((await t.as(user.token).get('/v1/integrations/platform/twitch/scopes')).status).toBe(200);
  });
});

describe('integrations when the platform cannot be reached', () => {
  let fake: FakeStreamingProvider;
  let t: TestApp;
  /** Two users with an integration each: one to read through, one to disconnect, so the tests here share nothing they change. */
  let reader: { token: string; id: string };
  let leaver: { token: string; id: string };
  const { startConnect, outcomeOf, connect, callback } = flows(() => t);
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
      const response = await t.as(reader.token).raw({ method: 'POST', url: `/v1/integrations/${reader.id}/${action}` });
      expect({ action, status: response.status, body: response.body }).toEqual({
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
    const response = await t.as(leaver.token).delete(`/v1/integrations/${leaver.id}`);
    expect(response.body).toEqual({ success: true, message: 'Disconnected from Twitch' });
    expect((await t.as(leaver.token).get('/v1/integrations')).body).toEqual([]);
  });
});
