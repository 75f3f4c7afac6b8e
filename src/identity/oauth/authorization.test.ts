import { createHmac, randomUUID } from 'node:crypto';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeBotVerifier } from '../../../test/fakes/bot-verifier.js';
import { tokenFromMail } from '../../../test/fakes/smtp.js';
import { FormBrowser, formAction, formField } from '../../../test/form-browser.js';
import {
  bearer,
  buildMailingTestApp,
  buildTestApp,
  createRoleWith,
  createUser,
  forbidden,
  freePort,
  login,
  TEST_ADMIN,
  TEST_SYSTEM_KEY,
  ownerlessKey,
  testConfig,
  UNAUTHORIZED,
  type TestApp,
} from '../../../test/helpers.js';
import type { RequestBody } from '../../../test/client.js';

const REDIRECT = 'https://rp.example.org/cb';
const APP_SECRETS = { id: 'id-app-secret-for-oauth-tests-0123456', backend: 'backend-app-secret-for-oauth-tests-01' };

let t: TestApp;
let base: string;
let owner: Awaited<ReturnType<typeof createUser>>;
let admin: string;
beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  // Every request here comes from 127.0.0.1: the anonymous rate limit would count the whole file as one client.
  const config = testConfig({ publicUrl: base, internalAppSecrets: APP_SECRETS });
  t = await buildTestApp({ config: { ...config, rateLimit: { ...config.rateLimit, enabled: false } } });
  admin = await login(t.app, TEST_ADMIN.email, TEST_ADMIN.password);
  await t.app.listen({ host: '127.0.0.1', port });
  owner = await createUser(t.app, ['role_user', 'role_developer']);
});
afterAll(() => t.close());

type Registered = { client: { id: string }; client_secret: string | null };

async function registerClient(
  body: Partial<RequestBody<'post', '/v1/oauth/clients'>> = {},
  token = owner.token,
): Promise<Registered> {
  const response = await t
    .as(token)
    .post('/v1/oauth/clients', {
      name: 'Harbour Log',
      redirect_uris: [REDIRECT],
      allowed_scopes: ['openid', 'profile', 'email', 'gps:read'],
      ...body,
    })
    .expect(201);
  return response.body;
}

const firstPartyClient = () => registerClient({ is_first_party: true }, admin);

async function relyingParty(registered: Registered) {
  const auth = registered.client_secret ? client.ClientSecretBasic(registered.client_secret) : client.None();
  return client.discovery(new URL(`${base}/v1/oauth`), registered.client.id, undefined, auth, {
    execute: [client.allowInsecureRequests],
  });
}

/** The start of a code flow as openid-client builds it: the URL to open, and what the callback is checked against. */
async function startFlow(rp: client.Configuration, scope = 'openid profile email gps:read') {
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const url = client.buildAuthorizationUrl(rp, {
    redirect_uri: REDIRECT,
    scope,
    state,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  });
  return { url: url.href, verifier, state };
}

/** A browser signs in (and consents when asked); returns the URL the relying party is sent back to. */
async function authorize(
  browser: FormBrowser,
  url: string,
  user: { username: string; password: string },
  decision: 'allow' | 'deny' = 'allow',
) {
  let { response, url: at } = await browser.follow(await browser.get(url));
  while (at.startsWith(base)) {
    const page = await response.text();
    expect(response.status, page).toBe(200);
    const form: Record<string, string> = page.includes('name="password"')
      ? { identifier: user.username, password: user.password }
      : { decision };
    ({ response, url: at } = await browser.follow(await browser.post(formAction(page), form)));
  }
  return new URL(at);
}

async function codeFlow(registered: Registered, user = owner, scope?: string) {
  const rp = await relyingParty(registered);
  const flow = await startFlow(rp, scope);
  const callback = await authorize(new FormBrowser(base), flow.url, user);
  const tokens = await client.authorizationCodeGrant(rp, callback, {
    pkceCodeVerifier: flow.verifier,
    expectedState: flow.state,
  });
  return { rp, tokens };
}

function mintAssertion(subject: string, app: 'id' | 'backend' = 'id', secret = APP_SECRETS[app]) {
  const issuedAt = String(Math.floor(t.clock.nowMs() / 1000));
  const nonce = `idaa_${randomUUID().replaceAll('-', '')}`;
  const mac = createHmac('sha256', secret).update(`${app}|${subject}|${issuedAt}|${nonce}`).digest('base64url');
  return [app, subject, issuedAt, nonce, mac].join('.');
}

/** A first-party backend's authorization for the user (X-ID-App-Assertion): the flow and the raw 303 answer. */
async function authorizeAs(registered: Registered, assertion: string) {
  const flow = await startFlow(await relyingParty(registered));
  return {
    flow,
    response: await fetch(flow.url, { redirect: 'manual', headers: { 'x-id-app-assertion': assertion } }),
  };
}

const me = (token: string) => t.as(token).get('/v1/users/me');
const auditOf = async (userId: string, eventType: string) =>
  (
    await t
      .as(admin)
      .get(`/v1/users/${userId}/audit`, { query: { event_type: eventType } })
      .expect(200)
  ).body.events as {
    metadata: Record<string, unknown>;
    resource_id: string;
  }[];

describe('authorization code flow with PKCE', () => {
  it('signs in, asks consent once, and gives the relying party verified ID token claims and userinfo', async () => {
    const registered = await registerClient();
    const user = await createUser(t.app);
    const { rp, tokens } = await codeFlow(registered, user);

    expect(tokens.access_token).toMatch(/^wgat_/);
    expect(tokens.refresh_token).toMatch(/^wgrt_/);
    expect(tokens.claims()).toMatchObject({ iss: `${base}/v1/oauth`, sub: user.id, aud: registered.client.id });
    expect(await client.fetchUserInfo(rp, tokens.access_token, user.id)).toEqual({
      sub: user.id,
      name: user.username,
      preferred_username: user.username,
      updated_at: expect.any(Number),
      email: `${user.username}@example.org`,
      email_verified: true,
    });
    expect(await auditOf(user.id, 'consent_granted')).toEqual([
      expect.objectContaining({
        resource_id: registered.client.id,
        metadata: {
          scopes: ['openid', 'profile', 'email', 'gps:read'],
          added: ['openid', 'profile', 'email', 'gps:read'],
        },
      }),
    ]);

    // The same user in a new browser signs in again, but is not asked again.
    const again = await startFlow(rp);
    const browser = new FormBrowser(base);
    const page = await (await browser.follow(await browser.get(again.url))).response.text();
    const callback = new URL(
      (
        await browser.follow(
          await browser.post(formAction(page), { identifier: user.username, password: user.password }),
        )
      ).url,
    );
    expect(callback.searchParams.get('code')).toEqual(expect.any(String));
  });

  it('answers the access token as a bearer credential acting within the granted scopes', async () => {
    const adminSignIn = { username: TEST_ADMIN.username, password: TEST_ADMIN.password };
    const { tokens } = await codeFlow(await registerClient(), adminSignIn as never, 'openid gps:read');
    expect((await me(tokens.access_token).expect(200)).body.data.username).toBe(TEST_ADMIN.username);
    // A super admin's token does only what it was granted: GPS reads, not the user list.
    expect((await t.as(tokens.access_token).get('/v1/gps')).status).toBe(200);
    expect((await t.as(tokens.access_token).get('/v1/users')).status).toBe(403);
  });

  it('stops answering an access token once it expires, cached or not', async () => {
    const { tokens } = await codeFlow(await registerClient());
    expect((await me(tokens.access_token)).status).toBe(200);
    t.clock.advance(3601_000);
    try {
      expect((await me(tokens.access_token)).body).toEqual(UNAUTHORIZED);
    } finally {
      t.clock.advance(-3601_000);
    }
  });

  it('tells the relying party when the user denies access', async () => {
    const registered = await registerClient();
    const rp = await relyingParty(registered);
    const flow = await startFlow(rp);
    const callback = await authorize(new FormBrowser(base), flow.url, await createUser(t.app), 'deny');
    expect(Object.fromEntries(callback.searchParams)).toMatchObject({ error: 'access_denied', state: flow.state });
  });

  it('shows the sign-in page again with the error after a wrong password', async () => {
    const flow = await startFlow(await relyingParty(await registerClient()));
    const browser = new FormBrowser(base);
    const page = await (await browser.follow(await browser.get(flow.url))).response.text();
    const retry = await browser.post(formAction(page), { identifier: owner.username, password: 'not-the-password' });
    expect(retry.status).toBe(401);
    expect(retry.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await retry.text();
    expect(html).toContain('role="alert"');
    expect(formField(html, 'identifier')).toBe(owner.username);
  });

  it('locks the account after 10 wrong passwords in all, whether its username or its email was typed', async () => {
    const user = await createUser(t.app);
    const flow = await startFlow(await relyingParty(await registerClient()));
    const browser = new FormBrowser(base);
    let page = await (await browser.follow(await browser.get(flow.url))).response.text();
    for (let i = 0; i < 10; i++) {
      const retry = await browser.post(formAction(page), {
        identifier: i % 2 ? user.username : `${user.username}@example.org`,
        password: 'not-the-password',
      });
      expect(retry.status).toBe(401);
      page = await retry.text();
    }
    const locked = await browser.post(formAction(page), { identifier: user.username, password: user.password });
    expect(locked.status).toBe(429);
    expect(await locked.text()).toContain('Too many failed sign-in attempts');
    // The same lock holds on POST /v1/auth/login.
    const api = await t
      .as(null)
      .post(
        '/v1/auth/login',
        { identifier: `${user.username}@example.org`, password: user.password },
        { remoteAddress: '10.0.5.1' },
      );
    expect(api.body).toMatchObject({ code: 'sign_in.locked_out' });
  });

  it('shows the bot check when bot protection is on, and refuses a sign-in without its token', async () => {
    const port = await freePort();
    const verifier = await startFakeBotVerifier();
    const guarded = await buildTestApp({
      config: {
        publicUrl: `http://127.0.0.1:${port}`,
        botProtection: { secret: 'bot-secret', siteKey: '0x4AAAA-site-key', verifyUrl: verifier.url },
      },
    });
    try {
      await guarded.app.listen({ host: '127.0.0.1', port });
      const signedIn = await guarded
        .as(null)
        .post('/v1/auth/login', {
          identifier: TEST_ADMIN.email,
          password: TEST_ADMIN.password,
          turnstile_token: 'human',
        })
        .expect(200);
      const created = await guarded
        .as(signedIn.body.session_token)
        .post('/v1/oauth/clients', { name: 'Guarded', redirect_uris: [REDIRECT] })
        .expect(201);
      const rp = await client.discovery(
        new URL(`http://127.0.0.1:${port}/v1/oauth`),
        created.body.client.id,
        undefined,
        client.ClientSecretBasic(created.body.client_secret!),
        { execute: [client.allowInsecureRequests] },
      );
      const flow = await startFlow(rp, 'openid profile');
      const browser = new FormBrowser(`http://127.0.0.1:${port}`);
      const { response } = await browser.follow(await browser.get(flow.url));
      expect(response.headers.get('content-security-policy')).toContain(
        'script-src https://challenges.cloudflare.com; frame-src https://challenges.cloudflare.com',
      );
      const page = await response.text();
      expect(page).toContain(
        '<div class="cf-turnstile" data-sitekey="0x4AAAA-site-key" data-response-field-name="turnstile_token"></div>',
      );
      const adminForm = { identifier: TEST_ADMIN.username, password: TEST_ADMIN.password };
      const refused = await browser.post(formAction(page), adminForm);
      expect(refused.status).toBe(400);
      const retry = await refused.text();
      expect(retry).toContain('turnstile_token is required');
      const passed = await browser.post(formAction(retry), { ...adminForm, turnstile_token: 'human' });
      expect(passed.status).toBe(303);
    } finally {
      await guarded.close();
      await verifier.close();
    }
  });

  it('refuses a sign-in form posted from another site', async () => {
    const flow = await startFlow(await relyingParty(await registerClient()));
    const browser = new FormBrowser(base);
    const page = await (await browser.follow(await browser.get(flow.url))).response.text();
    const response = await browser.post(
      formAction(page),
      { identifier: owner.username, password: owner.password },
      { origin: 'https://evil.example' },
    );
    expect(response.status).toBe(403);
  });

  it('refuses an unregistered redirect URI without redirecting, and a request without PKCE', async () => {
    const registered = await registerClient();
    const rp = await relyingParty(registered);
    const flow = await startFlow(rp);
    const altered = new URL(flow.url);
    altered.searchParams.set('redirect_uri', 'https://rp.example.org/cb/../evil');
    const wrongRedirect = await fetch(altered, { redirect: 'manual' });
    expect(wrongRedirect.status).toBe(400);
    expect(await wrongRedirect.json()).toMatchObject({ error: 'invalid_redirect_uri' });

    const withoutPkce = new URL(flow.url);
    withoutPkce.searchParams.delete('code_challenge');
    withoutPkce.searchParams.delete('code_challenge_method');
    const refused = await fetch(withoutPkce, { redirect: 'manual' });
    expect(new URL(refused.headers.get('location')!).searchParams.get('error')).toBe('invalid_request');
  });

  it('refuses a wrong PKCE verifier and a code used twice (and ends the tokens of its first use)', async () => {
    const registered = await registerClient();
    const rp = await relyingParty(registered);
    const flow = await startFlow(rp);
    const callback = await authorize(new FormBrowser(base), flow.url, owner);
    const wrong = client.authorizationCodeGrant(rp, callback, {
      pkceCodeVerifier: client.randomPKCECodeVerifier(),
      expectedState: flow.state,
    });
    expect(
      await wrong.then(
        () => 'accepted',
        (err: { error?: string }) => err.error,
      ),
    ).toBe('invalid_grant');

    const second = await startFlow(rp);
    const secondCallback = await authorize(new FormBrowser(base), second.url, owner);
    const tokens = await client.authorizationCodeGrant(rp, secondCallback, {
      pkceCodeVerifier: second.verifier,
      expectedState: second.state,
    });
    const reused = client.authorizationCodeGrant(rp, secondCallback, {
      pkceCodeVerifier: second.verifier,
      expectedState: second.state,
    });
    expect(
      await reused.then(
        () => 'accepted',
        (err: { error?: string }) => err.error,
      ),
    ).toBe('invalid_grant');
    expect((await me(tokens.access_token)).status).toBe(401);
  });

  it('works for a public client, which has no secret and must use PKCE', async () => {
    const registered = await registerClient({ client_type: 'public' });
    expect(registered.client_secret).toBeNull();
    const { tokens } = await codeFlow(registered);
    expect((await me(tokens.access_token)).status).toBe(200);
  });
});

describe('what an access token may do', () => {
  const OAUTH_TOKEN_REFUSED = {
    error: 'Forbidden',
    message: 'OAuth access tokens may not use this route; it needs a session or an API key',
    code: 'auth.oauth_token_not_permitted',
  };

  it('reaches routes open to any credential only where the app needs them', async () => {
    const { tokens } = await codeFlow(await registerClient(), owner, 'openid');
    const api = t.as(tokens.access_token);
    expect((await api.get('/v1/users/me')).status).toBe(200);
    const revoke = await api.post('/v1/oauth/revoke', { client_id: randomUUID() });
    expect([revoke.status, revoke.body]).toEqual([403, OAUTH_TOKEN_REFUSED]);
    // Routes on the user's own account take a token only with their permission as a granted scope, as for API keys.
    for (const [method, url, payload, permission] of [
      ['GET', '/v1/user/export', undefined, 'export:read'],
      ['GET', '/v1/users/me/audit', undefined, 'audit:read_own'],
      ['POST', '/v1/oauth/clients', { name: 'Sneaky', redirect_uris: [REDIRECT] }, 'oauth_clients:write'],
    ] as const) {
      const response = await api.raw({ method, url, ...(payload ? { payload } : {}) });
      expect([url, response.status, response.body]).toEqual([url, 403, forbidden(permission)]);
    }
    // A permission scope it was not granted is refused like any missing permission.
    expect((await api.get('/v1/gps')).status).toBe(403);
  });

  it('is never granted a wildcard: clients cannot list one', async () => {
    const response = await t
      .as(owner.token)
      .post('/v1/oauth/clients', { name: 'Greedy', redirect_uris: [REDIRECT], allowed_scopes: ['openid', '*:*'] });
    expect(response.status).toBe(400);
    const discovery = (await (await fetch(`${base}/v1/oauth/.well-known/openid-configuration`)).json()) as {
      scopes_supported: string[];
    };
    expect(discovery.scopes_supported).toContain('gps:read');
    expect(discovery.scopes_supported.filter((scope) => scope.includes('*'))).toEqual([]);
  });

  it('stops when its client is deactivated', async () => {
    const registered = await registerClient();
    const { tokens } = await codeFlow(registered);
    await t.as(owner.token).patch(`/v1/oauth/clients/${registered.client.id}`, { is_active: false }).expect(200);
    expect((await me(tokens.access_token)).body).toEqual(UNAUTHORIZED);
  });

  it('stops at once, though already in use, when its client is deactivated or deleted through an upper-case id', async () => {
    for (const method of ['patch', 'delete'] as const) {
      const registered = await registerClient();
      const { tokens } = await codeFlow(registered);
      expect((await me(tokens.access_token)).status).toBe(200);
      const path = `/v1/oauth/clients/${registered.client.id.toUpperCase()}` as const;
      const api = t.as(owner.token);
      const changed = method === 'patch' ? await api.patch(path, { is_active: false }) : await api.delete(path);
      expect(changed.status).toBeLessThan(300);
      expect((await me(tokens.access_token)).body).toEqual(UNAUTHORIZED);
    }
  });

  it('stops when its user is deleted', async () => {
    const user = await createUser(t.app);
    const { tokens } = await codeFlow(await registerClient(), user);
    expect((await t.as(admin).delete(`/v1/users/${user.id}`)).status).toBeLessThan(300);
    expect((await me(tokens.access_token)).body).toEqual(UNAUTHORIZED);
  });

  it('is the only OAuth token the API accepts: refresh and client-credentials tokens are not credentials', async () => {
    const registered = await registerClient();
    const { rp, tokens } = await codeFlow(registered);
    expect((await me(tokens.refresh_token!)).body).toEqual(UNAUTHORIZED);
    const machine = await client.clientCredentialsGrant(rp);
    expect((await me(machine.access_token)).body).toEqual(UNAUTHORIZED);
  });

  it("signing in on the provider's page starts no session of this API", async () => {
    const user = await createUser(t.app);
    const sessions = async () => (await t.as(user.token).get('/v1/users/me/sessions').expect(200)).body.sessions.length;
    const before = await sessions();
    await codeFlow(await registerClient(), user);
    expect(await sessions()).toBe(before);
  });
});

describe('refresh tokens', () => {
  it('rotate at each use; a reused one revokes the whole family', async () => {
    const { rp, tokens } = await codeFlow(await registerClient());
    const first = await client.refreshTokenGrant(rp, tokens.refresh_token!);
    const refreshed = await client.refreshTokenGrant(rp, first.refresh_token!);
    expect(refreshed.refresh_token).not.toBe(first.refresh_token);
    expect((await me(refreshed.access_token)).status).toBe(200);

    const reuse = client.refreshTokenGrant(rp, tokens.refresh_token!);
    expect(
      await reuse.then(
        () => 'accepted',
        (err: { error?: string }) => err.error,
      ),
    ).toBe('invalid_grant');
    expect((await me(refreshed.access_token)).body).toEqual(UNAUTHORIZED);
    expect((await client.tokenIntrospection(rp, refreshed.refresh_token!)).active).toBe(false);
  });
});

describe('racing requests', () => {
  const RACERS = 5;

  it('let only one of several concurrent uses of a refresh token through, and then revoke the family', async () => {
    const { rp, tokens } = await codeFlow(await registerClient());
    const outcomes = await Promise.allSettled(
      Array.from({ length: RACERS }, () => client.refreshTokenGrant(rp, tokens.refresh_token!)),
    );
    const won = outcomes.filter((outcome) => outcome.status === 'fulfilled');
    expect(won.length).toBeLessThanOrEqual(1);
    expect(
      outcomes
        .filter((outcome) => outcome.status === 'rejected')
        .map((outcome) => (outcome.reason as { error?: string }).error),
    ).toContain('invalid_grant');
    for (const { value } of won as PromiseFulfilledResult<client.TokenEndpointResponse>[]) {
      expect((await me(value.access_token)).status).toBe(401);
    }
  });

  it('redeem a code once when several exchanges race', async () => {
    const registered = await registerClient();
    const rp = await relyingParty(registered);
    const flow = await startFlow(rp);
    const callback = await authorize(new FormBrowser(base), flow.url, owner);
    const exchange = () =>
      client.authorizationCodeGrant(rp, callback, { pkceCodeVerifier: flow.verifier, expectedState: flow.state });
    const outcomes = await Promise.allSettled(Array.from({ length: RACERS }, exchange));
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled').length).toBeLessThanOrEqual(1);
  });
});

describe('revocation', () => {
  it('ends an access token at the API at once (RFC 7009)', async () => {
    const { rp, tokens } = await codeFlow(await registerClient());
    expect((await me(tokens.access_token)).status).toBe(200);
    await client.tokenRevocation(rp, tokens.access_token);
    expect((await me(tokens.access_token)).status).toBe(401);
  });

  it("logout-app ends one client's tokens and logout-everywhere all, keeping consent", async () => {
    const user = await createUser(t.app);
    const first = await registerClient();
    const second = await registerClient();
    const one = await codeFlow(first, user);
    const two = await codeFlow(second, user);

    await t.as(user.token).post('/v1/auth/logout-app', { clientId: first.client.id }).expect(200);
    expect((await me(one.tokens.access_token)).status).toBe(401);
    expect((await client.tokenIntrospection(one.rp, one.tokens.refresh_token!)).active).toBe(false);
    expect((await me(two.tokens.access_token)).status).toBe(200);

    // With the app's own token, as a first-party backend does (rule 8).
    const everywhere = await t.as(two.tokens.access_token).post('/v1/auth/logout-everywhere');
    expect(everywhere.status).toBe(200);
    expect((await me(two.tokens.access_token)).status).toBe(401);
    // Consent is kept: signing in again goes straight back to the app.
    const again = await codeFlow(second, user);
    expect((await me(again.tokens.access_token)).status).toBe(200);
    expect(await auditOf(user.id, 'consent_granted')).toHaveLength(2);
  });

  it('asks only for what was not consented to before', async () => {
    const user = await createUser(t.app);
    const registered = await registerClient();
    await codeFlow(registered, user, 'openid profile');
    const flow = await startFlow(await relyingParty(registered), 'openid profile email gps:read');
    const browser = new FormBrowser(base);
    const page = await (await browser.follow(await browser.get(flow.url))).response.text();
    const consent = await (
      await browser.follow(await browser.post(formAction(page), { identifier: user.username, password: user.password }))
    ).response.text();
    expect([...consent.matchAll(/<li>([^<]*)<\/li>/g)].map((match) => match[1])).toEqual([
      'See your email address',
      'gps:read',
    ]);
  });

  it("withdraws consent through /v1/oauth/revoke, ending the client's tokens", async () => {
    const user = await createUser(t.app);
    const registered = await registerClient();
    const { tokens } = await codeFlow(registered, user);
    const revoke = (token: string | null, clientId = registered.client.id) =>
      t.as(token).post('/v1/oauth/revoke', { client_id: clientId });

    const response = await revoke(user.token);
    expect(response.body).toEqual({ success: true, message: 'Consent withdrawn; the app has been signed out' });
    expect((await me(tokens.access_token)).status).toBe(401);
    expect(await auditOf(user.id, 'consent_revoked')).toEqual([
      expect.objectContaining({ resource_id: registered.client.id }),
    ]);
    expect((await revoke(user.token)).body).toMatchObject({ code: 'oauth.consent_not_found' });
    expect((await revoke(user.token, 'x')).status).toBe(400);
    expect((await revoke(null)).status).toBe(401);

    // The next authorization asks again.
    const flow = await startFlow(await relyingParty(registered));
    const browser = new FormBrowser(base);
    const page = await (await browser.follow(await browser.get(flow.url))).response.text();
    const next = await (
      await browser.follow(await browser.post(formAction(page), { identifier: user.username, password: user.password }))
    ).response.text();
    expect(next).toContain('name="decision"');
  });
});

describe('introspection (RFC 7662)', () => {
  it('answers a client about its own tokens only: another client learns nothing of them', async () => {
    const user = await createUser(t.app);
    const { rp, tokens } = await codeFlow(await registerClient(), user);
    expect(await client.tokenIntrospection(rp, tokens.access_token)).toMatchObject({ active: true, sub: user.id });

    const stranger = await relyingParty(
      await registerClient({}, (await createUser(t.app, ['role_user', 'role_developer'])).token),
    );
    for (const token of [tokens.access_token, tokens.refresh_token!]) {
      expect(await client.tokenIntrospection(stranger, token)).toEqual({ active: false });
    }
  });
});

describe("the provider's browser session and the user's tokens", () => {
  const refreshed = (rp: client.Configuration, token: string) =>
    client.refreshTokenGrant(rp, token).then(
      () => 'accepted',
      (err: { error?: string }) => err.error,
    );
  const providerSessionsOf = async (db: TestApp['database']['db'], userId: string) =>
    (
      await db
        .selectFrom('oauth_artifacts')
        .select('id')
        .where('model', '=', 'Session')
        .where('account_id', '=', userId)
        .execute()
    ).length;

  /** The user signs in on the provider's page in a browser of their own; the app gets tokens, and the browser stays signed in. */
  async function connected(user: { id: string; username: string; password: string }) {
    const rp = await relyingParty(await registerClient());
    const flow = await startFlow(rp);
    const browser = new FormBrowser(base);
    const callback = await authorize(browser, flow.url, user);
    const tokens = await client.authorizationCodeGrant(rp, callback, {
      pkceCodeVerifier: flow.verifier,
      expectedState: flow.state,
    });
    const landing = async () => (await browser.follow(await browser.get((await startFlow(rp)).url))).url;
    expect((await landing()).startsWith(REDIRECT)).toBe(true);
    expect(await providerSessionsOf(t.database.db, user.id)).toBe(1);
    return { rp, tokens, landing };
  }

  it('a ban ends the access and refresh tokens of every client and the sign-in on the provider', async () => {
    const user = await createUser(t.app);
    const first = await connected(user);
    const second = await codeFlow(await registerClient(), user);
    expect((await t.as(admin).post(`/v1/users/${user.id}/ban`, { reason: 'spam' })).status).toBe(200);
    for (const { rp, tokens } of [first, second]) {
      expect((await me(tokens.access_token)).body).toEqual(UNAUTHORIZED);
      expect(await refreshed(rp, tokens.refresh_token!)).toBe('invalid_grant');
    }
    expect(await providerSessionsOf(t.database.db, user.id)).toBe(0);
  });

  it('logout-everywhere ends the sign-in on the provider too: the next authorization asks for the password', async () => {
    const user = await createUser(t.app);
    const { landing } = await connected(user);
    expect((await t.as(user.token).post('/v1/auth/logout-everywhere')).status).toBe(200);
    expect(await providerSessionsOf(t.database.db, user.id)).toBe(0);
    expect((await landing()).startsWith(`${base}/v1/oauth/interaction/`)).toBe(true);
  });

  it("a password reset ends the tokens of every client and the old password's sign-in on the provider", async () => {
    const port = await freePort();
    const here = `http://127.0.0.1:${port}`;
    const { t: mailing, smtp } = await buildMailingTestApp({ config: { publicUrl: here } });
    try {
      await mailing.app.listen({ host: '127.0.0.1', port });
      const user = await createUser(mailing.app, ['role_user', 'role_developer']);
      const created = await mailing
        .as(user.token)
        .post('/v1/oauth/clients', { name: 'Harbour Log', redirect_uris: [REDIRECT] })
        .expect(201);
      const rp = await client.discovery(
        new URL(`${here}/v1/oauth`),
        created.body.client.id,
        undefined,
        client.ClientSecretBasic(created.body.client_secret!),
        { execute: [client.allowInsecureRequests] },
      );
      const browser = new FormBrowser(here);
      const flow = await startFlow(rp, 'openid profile');
      const landing = async (url = flow.url) => browser.follow(await browser.get(url));

      let { response, url } = await landing();
      while (url.startsWith(here)) {
        const page = await response.text();
        const form: Record<string, string> = page.includes('name="password"')
          ? { identifier: user.username, password: user.password }
          : { decision: 'allow' };
        ({ response, url } = await browser.follow(await browser.post(formAction(page), form)));
      }
      const tokens = await client.authorizationCodeGrant(rp, new URL(url), {
        pkceCodeVerifier: flow.verifier,
        expectedState: flow.state,
      });
      const asApp = () => mailing.as(tokens.access_token).get('/v1/users/me');
      expect((await asApp()).status).toBe(200);
      // Signed in on the provider: the next authorization goes straight back to the app.
      expect((await landing((await startFlow(rp, 'openid profile')).url)).url.startsWith(REDIRECT)).toBe(true);

      const email = `${user.username}@example.org`;
      await mailing.as(null).post('/v1/auth/reset-password', { email }).expect(200);
      const token = tokenFromMail(await smtp.waitFor(email));
      expect(
        (
          await mailing
            .as(null)
            .post('/v1/auth/reset-password/complete', { token, new_password: 'a brand new password' })
        ).status,
      ).toBe(200);

      expect((await asApp()).body).toEqual(UNAUTHORIZED);
      expect(await refreshed(rp, tokens.refresh_token!)).toBe('invalid_grant');
      const after = await landing((await startFlow(rp, 'openid profile')).url);
      expect(after.url.startsWith(here)).toBe(true);
      expect(await after.response.text()).toContain('name="password"');
      const [event] = await mailing.database.db
        .selectFrom('audit_events')
        .select('metadata')
        .where('user_id', '=', user.id)
        .where('event_type', '=', 'password_changed')
        .execute();
      expect(event?.metadata).toMatchObject({ via: 'reset', oauth_tokens_revoked: 2 });
    } finally {
      await mailing.close();
    }
  });
});

describe('connected apps', () => {
  const list = (token: string) => t.as(token).get('/v1/users/me/connected-apps');
  const disconnect = (token: string, clientId: string) => t.as(token).delete(`/v1/users/me/connected-apps/${clientId}`);

  it('lists the clients holding a grant or a consent, and disconnecting one ends its tokens and asks again next time', async () => {
    const user = await createUser(t.app);
    const thirdParty = await registerClient({ name: 'Tide Tables' });
    const firstParty = await registerClient({ name: 'Waygate Console', is_first_party: true }, admin);
    const started = Math.floor(Date.now() / 1000) * 1000;
    const consented = await codeFlow(thirdParty, user, 'openid gps:read');
    const trusted = await codeFlow(firstParty, user, 'openid profile');
    const apps = (await list(user.token).expect(200)).body.data as { client_id: string; last_used_at: string }[];
    expect(apps).toHaveLength(2);
    expect(apps).toEqual(
      expect.arrayContaining([
        {
          client_id: firstParty.client.id,
          client_name: 'Waygate Console',
          is_first_party: true,
          scopes: ['openid', 'profile'],
          consented_at: null,
          last_used_at: expect.any(String),
        },
        {
          client_id: thirdParty.client.id,
          client_name: 'Tide Tables',
          is_first_party: false,
          scopes: ['gps:read', 'openid'],
          consented_at: expect.any(String),
          last_used_at: expect.any(String),
        },
      ]),
    );
    // The provider stamps tokens with the time of day; most recently used first.
    for (const app of apps) expect(Date.parse(app.last_used_at)).toBeGreaterThanOrEqual(started);
    expect(Date.parse(apps[0]!.last_used_at)).toBeGreaterThanOrEqual(Date.parse(apps[1]!.last_used_at));
    // Nobody else's apps, and not for a credential without a user or an app's own token.
    expect((await list((await createUser(t.app)).token)).body).toEqual({ data: [] });
    expect((await list(trusted.tokens.access_token)).body).toEqual({
      error: 'Forbidden',
      message: 'Insufficient permissions for this operation: requires connected_apps:read',
      code: 'auth.forbidden',
    });

    expect((await disconnect(user.token, thirdParty.client.id)).status).toBe(204);
    expect((await me(consented.tokens.access_token)).body).toEqual(UNAUTHORIZED);
    expect(
      await client.refreshTokenGrant(consented.rp, consented.tokens.refresh_token!).then(
        () => 'accepted',
        (err: { error?: string }) => err.error,
      ),
    ).toBe('invalid_grant');
    expect((await me(trusted.tokens.access_token)).status).toBe(200);
    expect(await auditOf(user.id, 'consent_revoked')).toEqual([
      expect.objectContaining({
        resource_id: thirdParty.client.id,
        metadata: { scopes: ['openid', 'gps:read'], tokens_revoked: 2 },
      }),
    ]);
    expect((await list(user.token).expect(200)).body.data.map((app) => app.client_id)).toEqual([firstParty.client.id]);

    // A first-party app, which never needed consent, disconnects all the same.
    expect((await disconnect(user.token, firstParty.client.id)).status).toBe(204);
    expect((await me(trusted.tokens.access_token)).body).toEqual(UNAUTHORIZED);
    expect((await list(user.token)).body).toEqual({ data: [] });
    expect((await disconnect(user.token, firstParty.client.id)).body).toEqual({
      error: 'NotFound',
      message: 'This app holds no consent and no grant of yours',
      code: 'oauth.app_not_connected',
    });

    // The next authorization of the third-party app asks for consent again.
    const flow = await startFlow(consented.rp);
    const browser = new FormBrowser(base);
    const page = await (await browser.follow(await browser.get(flow.url))).response.text();
    const next = await (
      await browser.follow(await browser.post(formAction(page), { identifier: user.username, password: user.password }))
    ).response.text();
    expect(next).toContain('name="decision"');
  });

  it('answers 404 for a credential without a user, and 403 naming the permission to a key without it', async () => {
    expect((await list(await ownerlessKey(t, []))).body).toMatchObject({
      code: 'auth.forbidden',
      message: expect.stringContaining('connected_apps:read'),
    });
    const key = await ownerlessKey(t, ['connected_apps:read']);
    expect((await list(key)).body).toMatchObject({ code: 'user.credential_without_user' });
  });
});

describe('an access token granted audit:write', () => {
  it('records an event through REST and GraphQL alike', async () => {
    const role = await createRoleWith(t.app, `audit_writer_${randomUUID().slice(0, 8)}`, ['audit:write']);
    const writer = await createUser(t.app, ['role_user', role]);
    const { tokens } = await codeFlow(
      await registerClient({ allowed_scopes: ['openid', 'audit:write'] }),
      writer,
      'openid audit:write',
    );
    const event = { event_type: 'user_updated' as const, user_id: writer.id, metadata: { via: 'oauth' } };
    const rest = await t.as(tokens.access_token).post('/v1/internal/audit', event);
    expect(rest.status).toBe(201);
    const gql = await fetch(`${base}/v1/gql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...bearer(tokens.access_token) },
      body: JSON.stringify({
        query: 'mutation ($input: AuditEventInput!) { logAuditEvent(input: $input) { eventType userId } }',
        variables: { input: { eventType: 'user_updated', userId: writer.id } },
      }),
    });
    expect(await gql.json()).toEqual({ data: { logAuditEvent: { eventType: 'user_updated', userId: writer.id } } });
  });
});

describe('tokens of a user deleted for good', () => {
  it('stop at once when an active user is force-deleted (their cached token included)', async () => {
    const user = await createUser(t.app);
    const { tokens } = await codeFlow(await registerClient(), user);
    expect((await me(tokens.access_token)).status).toBe(200);
    const purge = await t.as(admin).post(`/v1/admin/users/${user.id}/force-delete`, { reason: 'abuse' });
    expect(purge.status).toBe(200);
    expect((await me(tokens.access_token)).status).toBe(401);
  });
});

describe('tokens of a user changed through a path spelling the id in upper case', () => {
  const gps = (token: string) => t.as(token).get('/v1/gps');

  it('stop at once when the user is banned or deleted, and lose a removed role at once', async () => {
    for (const change of ['ban', 'delete', 'role'] as const) {
      const user = await createUser(t.app, ['role_user', 'role_api_read_only']);
      const { tokens } = await codeFlow(await registerClient(), user);
      expect((await gps(tokens.access_token)).status).toBe(200);
      const upper = user.id.toUpperCase();
      const api = t.as(admin);
      const changed =
        change === 'ban'
          ? await api.post(`/v1/users/${upper}/ban`, {})
          : change === 'delete'
            ? await api.delete(`/v1/users/${upper}`)
            : await api.delete(`/v1/users/${upper}/roles/role_api_read_only`);
      expect(changed.status).toBeLessThan(300);
      expect((await gps(tokens.access_token)).status, change).toBe(change === 'role' ? 403 : 401);
    }
  });
});

describe('X-ID-App-Assertion handoff', () => {
  const codeOf = async (response: Response) => [response.status, ((await response.json()) as { code: string }).code];

  it('gives a first-party client the code for the asserted user, without a page', async () => {
    const registered = await firstPartyClient();
    const user = await createUser(t.app);
    const { flow, response } = await authorizeAs(registered, mintAssertion(user.id));
    expect(response.status).toBe(303);
    const callback = new URL(response.headers.get('location')!);
    expect(callback.origin + callback.pathname).toBe(REDIRECT);
    const tokens = await client.authorizationCodeGrant(await relyingParty(registered), callback, {
      pkceCodeVerifier: flow.verifier,
      expectedState: flow.state,
    });
    expect(tokens.claims()!.sub).toBe(user.id);
  });

  it('leaves no browser session behind: no cookie, nothing stored', async () => {
    const registered = await firstPartyClient();
    const user = await createUser(t.app);
    const { response } = await authorizeAs(registered, mintAssertion(user.id));
    expect(response.status).toBe(303);
    expect(response.headers.getSetCookie()).toEqual([]);
    const stored = await t.database.db
      .selectFrom('oauth_artifacts')
      .select('id')
      .where('model', '=', 'Session')
      .where('account_id', '=', user.id)
      .execute();
    expect(stored).toEqual([]);
  });

  it('answers an error to the client where a page would be needed (prompt=login)', async () => {
    const registered = await firstPartyClient();
    const user = await createUser(t.app);
    const flow = await startFlow(await relyingParty(registered));
    const url = new URL(flow.url);
    url.searchParams.set('prompt', 'login');
    const response = await fetch(url, {
      redirect: 'manual',
      headers: { 'x-id-app-assertion': mintAssertion(user.id) },
    });
    expect(response.status).toBe(303);
    const callback = new URL(response.headers.get('location')!);
    expect(callback.searchParams.get('code')).toEqual(expect.any(String));
  });

  it('refuses a replayed assertion, one signed by another app, and a third-party client', async () => {
    const registered = await firstPartyClient();
    const user = await createUser(t.app);
    const assertion = mintAssertion(user.id);
    expect((await authorizeAs(registered, assertion)).response.status).toBe(303);
    const replayed = (await authorizeAs(registered, assertion)).response;
    expect(await codeOf(replayed)).toEqual([401, 'app_assertion.replayed']);
    const forged = (await authorizeAs(registered, mintAssertion(user.id, 'id', APP_SECRETS.backend))).response;
    expect(await codeOf(forged)).toEqual([401, 'app_assertion.bad_signature']);
    const thirdParty = (await authorizeAs(await registerClient(), mintAssertion(user.id))).response;
    expect(await codeOf(thirdParty)).toEqual([403, 'oauth.assertion_needs_first_party_client']);
  });

  it('is not a system-key route: the key alone never authorizes', async () => {
    const flow = await startFlow(await relyingParty(await firstPartyClient()));
    const response = await fetch(flow.url, { redirect: 'manual', headers: bearer(TEST_SYSTEM_KEY) });
    expect(response.status).toBe(403);
  });
});

describe('signing key rotation', () => {
  const kidOf = (jwt: string) =>
    (JSON.parse(Buffer.from(jwt.split('.')[0]!, 'base64url').toString()) as { kid: string }).kid;
  const publishedKids = async () =>
    ((await (await fetch(`${base}/v1/oauth/jwks`)).json()) as { keys: { kid: string }[] }).keys.map((key) => key.kid);
  async function idTokenKid(registered: Registered, userId: string) {
    const { flow, response } = await authorizeAs(registered, mintAssertion(userId));
    const tokens = await client.authorizationCodeGrant(
      await relyingParty(registered),
      new URL(response.headers.get('location')!),
      { pkceCodeVerifier: flow.verifier, expectedState: flow.state },
    );
    return kidOf(tokens.id_token!);
  }
  const MINUTE = 60_000;

  it('publishes a new key at once, signs with it ten minutes later, and retires the old one after its tokens expired', async () => {
    const registered = await firstPartyClient();
    const user = await createUser(t.app);
    const old = await idTokenKid(registered, user.id);
    let moved = 0;
    const advance = (ms: number) => {
      t.clock.advance(ms);
      moved += ms;
    };
    try {
      const rotated = await t.app.services.oauth.rotateSigningKey();
      advance(MINUTE + 1000); // every node re-reads its keys within a minute, beside a request
      await expect.poll(publishedKids).toEqual([old, rotated.kid]);
      expect(await idTokenKid(registered, user.id)).toBe(old);

      advance(10 * MINUTE);
      await expect.poll(publishedKids).toEqual([rotated.kid, old]);
      expect(await idTokenKid(registered, user.id)).toBe(rotated.kid);

      expect(await t.app.services.oauth.retireSupersededKeys()).toBe(0);
      advance(2 * 60 * MINUTE);
      expect(await t.app.services.oauth.retireSupersededKeys()).toBe(1);
      advance(MINUTE + 1000);
      await expect.poll(publishedKids).toEqual([rotated.kid]);
    } finally {
      t.clock.advance(-moved);
    }
  });
});
