import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RequestBody } from '../../../test/client.js';
import { buildTestApp, createUser, freePort, type TestApp } from '../../../test/helpers.js';

let t: TestApp;
let base: string;
let owner: Awaited<ReturnType<typeof createUser>>;
beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  t = await buildTestApp({ config: { publicUrl: base } });
  await t.app.listen({ host: '127.0.0.1', port });
  owner = await createUser(t.app);
});
afterAll(() => t.close());

async function registerClient(body: Partial<RequestBody<'post', '/v1/oauth/clients'>> = {}) {
  const response = await t
    .as(owner.token)
    .post('/v1/oauth/clients', { name: 'Relying party', redirect_uris: ['https://rp.example.org/cb'], ...body })
    .expect(201);
  return response.body as { client: { id: string }; client_secret: string };
}

/** The OAuth error a failed request of openid-client carries (in its body or its WWW-Authenticate challenge). */
async function oauthError(request: Promise<unknown>): Promise<string | undefined> {
  const err = (await request.then(
    () => undefined,
    (e: unknown) => e,
  )) as { error?: string; cause?: { parameters?: { error?: string } }[] } | undefined;
  return err?.error ?? err?.cause?.[0]?.parameters?.error;
}

/** openid-client (OpenID Certified) configured by discovery, as any relying party would. */
async function relyingParty(clientId: string, secret: string) {
  return client.discovery(new URL(`${base}/v1/oauth`), clientId, undefined, client.ClientSecretBasic(secret), {
    execute: [client.allowInsecureRequests],
  });
}

describe('OAuth provider', () => {
  it('publishes one issuer where OIDC Discovery and RFC 8414 look for it, nowhere implying another, with the signing keys', async () => {
    const underPrefix = (await (await fetch(`${base}/v1/oauth/.well-known/openid-configuration`)).json()) as Record<
      string,
      unknown
    >;
    const pathInserted = await (await fetch(`${base}/.well-known/oauth-authorization-server/v1/oauth`)).json();
    expect(underPrefix.issuer).toBe(`${base}/v1/oauth`);
    expect(pathInserted).toEqual(underPrefix);
    // The root addresses would name the issuer {origin}: not served.
    for (const root of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server'])
      expect((await fetch(`${base}${root}`)).status).toBe(404);
    // openid-client checks that the issuer matches the address in both of its modes.
    const { client: registered, client_secret } = await registerClient();
    for (const algorithm of ['oidc', 'oauth2'] as const) {
      const rp = await client.discovery(
        new URL(`${base}/v1/oauth`),
        registered.id,
        undefined,
        client.ClientSecretBasic(client_secret),
        { algorithm, execute: [client.allowInsecureRequests] },
      );
      expect(rp.serverMetadata().issuer).toBe(`${base}/v1/oauth`);
    }
    // Only what a registered client can use: the code flow, its query response mode, the grants enabled.
    expect(underPrefix).toMatchObject({
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: expect.arrayContaining(['authorization_code', 'refresh_token', 'client_credentials']),
    });
    expect(underPrefix.grant_types_supported).not.toContain('implicit');
    expect(underPrefix).toMatchObject({
      token_endpoint: `${base}/v1/oauth/token`,
      jwks_uri: `${base}/v1/oauth/jwks`,
      introspection_endpoint: `${base}/v1/oauth/token/introspection`,
      revocation_endpoint: `${base}/v1/oauth/token/revocation`,
      code_challenge_methods_supported: ['S256'],
    });
    const jwks = (await (await fetch(`${base}/v1/oauth/jwks`)).json()) as { keys: unknown[] };
    expect(jwks.keys).toEqual([
      expect.objectContaining({ kty: 'RSA', alg: 'RS256', use: 'sig', kid: expect.any(String) }),
    ]);
    expect(JSON.stringify(jwks)).not.toMatch(/"d"|"p"|"q"/);
  });

  it('issues client-credentials tokens that introspect as active until revoked', async () => {
    const { client: registered, client_secret } = await registerClient();
    const rp = await relyingParty(registered.id, client_secret);
    const tokens = await client.clientCredentialsGrant(rp, { scope: 'openid' });
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.access_token).toEqual(expect.any(String));

    const active = await client.tokenIntrospection(rp, tokens.access_token);
    expect(active).toMatchObject({ active: true, client_id: registered.id });
    await client.tokenRevocation(rp, tokens.access_token);
    expect((await client.tokenIntrospection(rp, tokens.access_token)).active).toBe(false);
  });

  it('stores every token of grants made at once before answering, and each can be revoked alone', async () => {
    const { client: registered, client_secret } = await registerClient();
    const rp = await relyingParty(registered.id, client_secret);
    const tokens = await Promise.all(Array.from({ length: 12 }, () => client.clientCredentialsGrant(rp)));
    expect(new Set(tokens.map((token) => token.access_token)).size).toBe(12);
    const stored = await t.database.db
      .selectFrom('oauth_artifacts')
      .select('id')
      .where('model', '=', 'ClientCredentials')
      .where('client_id', '=', registered.id)
      .execute();
    expect(stored).toHaveLength(12);
    await client.tokenRevocation(rp, tokens[0]!.access_token);
    const introspected = await Promise.all(tokens.map((token) => client.tokenIntrospection(rp, token.access_token)));
    expect(introspected.map((answer) => answer.active)).toEqual([false, ...Array(11).fill(true)]);
  });

  it('serves every endpoint discovery names, and takes the secret by each client authentication it lists', async () => {
    const discovered = (await (await fetch(`${base}/v1/oauth/.well-known/openid-configuration`)).json()) as Record<
      string,
      unknown
    >;
    const endpoints = Object.entries(discovered)
      .filter(([name, value]) => name.endsWith('_endpoint') || name === 'jwks_uri')
      .map(([, url]) => url as string);
    for (const url of endpoints) {
      const answer = await fetch(url, {
        method: url.endsWith('/authorize') || url.endsWith('/jwks') || url.endsWith('/userinfo') ? 'GET' : 'POST',
      });
      expect([url, answer.status === 404]).toEqual([url, false]);
    }
    const { client: registered, client_secret } = await registerClient();
    const grant = (headers: Record<string, string>, body: string) =>
      fetch(`${base}/v1/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: `grant_type=client_credentials&${body}`,
      });
    const byMethod: Record<string, () => Promise<Response>> = {
      client_secret_basic: () =>
        grant({ authorization: `Basic ${Buffer.from(`${registered.id}:${client_secret}`).toString('base64')}` }, ''),
      client_secret_post: () => grant({}, `client_id=${registered.id}&client_secret=${client_secret}`),
    };
    const listed = discovered.token_endpoint_auth_methods_supported as string[];
    for (const method of listed.filter((name) => name !== 'none'))
      expect([method, (await byMethod[method]!()).status]).toEqual([method, 200]);
  });

  it('answers token requests with Cache-Control: no-store', async () => {
    const { client: registered, client_secret } = await registerClient();
    const response = await fetch(`${base}/v1/oauth/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${registered.id}:${client_secret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'grant_type=client_credentials',
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
  });

  it('refuses a wrong secret, and the old secret at once after regeneration', async () => {
    const { client: registered, client_secret } = await registerClient();
    expect(
      await oauthError(client.clientCredentialsGrant(await relyingParty(registered.id, 'wgcs_not-the-secret'))),
    ).toBe('invalid_client');
    const regenerated = await t
      .as(owner.token)
      .post(`/v1/oauth/clients/${registered.id}/regenerate-secret`)
      .expect(200);
    expect(await oauthError(client.clientCredentialsGrant(await relyingParty(registered.id, client_secret)))).toBe(
      'invalid_client',
    );
    const tokens = await client.clientCredentialsGrant(
      await relyingParty(registered.id, regenerated.body.client_secret),
    );
    expect(tokens.access_token).toEqual(expect.any(String));
  });

  it('refuses clients that are deactivated or deleted', async () => {
    const { client: registered, client_secret } = await registerClient();
    const rp = await relyingParty(registered.id, client_secret);
    await t.as(owner.token).patch(`/v1/oauth/clients/${registered.id}`, { is_active: false }).expect(200);
    expect(await oauthError(client.clientCredentialsGrant(rp))).toBe('invalid_client');
    await t.as(owner.token).delete(`/v1/oauth/clients/${registered.id}`).expect(204);
    expect(await oauthError(client.clientCredentialsGrant(rp))).toBe('invalid_client');
  });
});

describe('without PUBLIC_URL', () => {
  it('issues as this machine (http://localhost:PORT), never as whatever Host a request names', async () => {
    const other = await buildTestApp();
    try {
      const response = await other
        .as(null)
        .get('/v1/oauth/.well-known/openid-configuration', { headers: { host: 'evil.example' } })
        .expect(200);
      expect(response.body.issuer).toBe(`http://localhost:${other.config.port}/v1/oauth`);
    } finally {
      await other.close();
    }
  });
});
