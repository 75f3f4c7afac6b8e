import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RawAnswer, RequestBody } from '../../../test/client.js';
import {
  buildTestApp,
  createApiKey,
  createUser,
  forbidden,
  login,
  TEST_ADMIN,
  TEST_SYSTEM_KEY,
  UNKNOWN_ID,
  type TestApp,
} from '../../../test/helpers.js';
import { hashToken } from '../../platform/auth/tokens.js';

let t: TestApp;
let admin: string;
beforeAll(async () => {
  t = await buildTestApp();
  admin = await login(t.app, 'admin', TEST_ADMIN.password);
});
afterAll(() => t.close());

type Registration = Partial<RequestBody<'post', '/v1/oauth/clients'>>;
const register = (token: string, body: Registration = {}) =>
  t.as(token).post('/v1/oauth/clients', {
    name: 'Harbour log',
    redirect_uris: ['https://harbour.example.org/callback'],
    ...body,
  });
/** A registered client's id. */
const newClient = async (token: string, body: Registration = {}) =>
  (await register(token, body).expect(201)).body.client.id;
const secretHashOf = async (id: string) =>
  (await t.database.db.selectFrom('oauth_clients').select('secret_hash').where('id', '=', id).executeTakeFirstOrThrow())
    .secret_hash;
const eventsOf = (id: string) =>
  t.database.db
    .selectFrom('audit_events')
    .select(['event_type', 'metadata'])
    .where('resource_id', '=', id)
    .orderBy('created_at')
    .execute();

describe('POST /v1/oauth/clients', () => {
  it('registers a confidential client: the secret is shown once and stored only as its hash', async () => {
    const owner = await createUser(t.app);
    const response = await register(owner.token, {
      description: 'Logbook',
      allowed_scopes: ['openid', 'gps:read'],
    }).expect(201);
    const body = response.body;
    expect(body).toEqual({
      client: {
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        name: 'Harbour log',
        client_type: 'confidential',
        is_active: true,
      },
      client_secret: expect.stringMatching(/^wgcs_[A-Za-z0-9_-]{43}$/),
    });
    expect(await secretHashOf(body.client.id)).toBe(hashToken(body.client_secret!));

    const shown = await t.as(owner.token).get(`/v1/oauth/clients/${body.client.id}`);
    expect(shown.body).toEqual({
      id: body.client.id,
      name: 'Harbour log',
      description: 'Logbook',
      logo_url: null,
      homepage_url: null,
      privacy_policy_url: null,
      terms_of_service_url: null,
      redirect_uris: ['https://harbour.example.org/callback'],
      allowed_scopes: ['openid', 'gps:read'],
      client_type: 'confidential',
      is_active: true,
      is_first_party: false,
      owner_user_id: owner.id,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(shown.text).not.toContain('secret');
    expect(await eventsOf(body.client.id)).toEqual([expect.objectContaining({ event_type: 'client_created' })]);
  });

  it('registers a public client without a secret, with the default scopes', async () => {
    const owner = await createUser(t.app);
    const response = await register(owner.token, {
      client_type: 'public',
      redirect_uris: ['http://127.0.0.1:8765/cb', 'http://[::1]/cb', 'http://localhost:3000/cb'],
    }).expect(201);
    expect(response.body).toMatchObject({ client: { client_type: 'public' }, client_secret: null });
    const client = (await t.as(owner.token).get(`/v1/oauth/clients/${response.body.client.id}`).expect(200)).body;
    expect(client.allowed_scopes).toEqual(['openid', 'profile', 'email']);
    expect(await secretHashOf(client.id)).toBeNull();
  });

  it.each([
    ['not absolute', '/callback', 'is not an absolute URL'],
    ['a fragment', 'https://app.example.org/cb#x', 'has a fragment'],
    ['plain http off loopback', 'http://app.example.org/cb', 'must use https'],
    ['another scheme', 'ftp://app.example.org/cb', 'must use https'],
  ])('refuses a redirect URI that is %s, naming it', async (_case, uri, reason) => {
    const owner = await createUser(t.app);
    const response = await register(owner.token, { redirect_uris: ['https://ok.example.org/cb', uri] }).expect(400);
    expect(response.body).toMatchObject({ code: 'oauth_client.invalid_redirect_uri' });
    expect(response.body.message).toContain(reason);
  });

  it('quotes a long refused redirect URI by a short prefix only', async () => {
    const owner = await createUser(t.app);
    const uri = `ftp://app.example.org/${'a'.repeat(1900)}`;
    const response = await register(owner.token, { redirect_uris: [uri] }).expect(400);
    expect(response.body.message).toBe(
      `redirect_uris: "${uri.slice(0, 64)}… (${uri.length} characters)" must use https (http only on a loopback address)`,
    );
  });

  it('rejects a missing name, no redirect URI and a bad homepage with 400 naming the field', async () => {
    const owner = await createUser(t.app);
    for (const [body, field] of [
      [{ name: '' }, 'name'],
      [{ redirect_uris: [] }, 'redirect_uris'],
      [{ homepage_url: 'javascript:alert(1)' }, 'homepage_url'],
    ] as [Registration, string][]) {
      const response = await register(owner.token, body).expect(400);
      expect(response.body.message).toContain(field);
    }
  });

  it('leaves is_first_party and owner_user_id to super admins; the owner must be a developer', async () => {
    const user = await createUser(t.app);
    expect((await register(user.token, { is_first_party: true })).body).toMatchObject({
      code: 'oauth_client.first_party_forbidden',
    });
    expect((await register(user.token, { owner_user_id: user.id })).body).toMatchObject({
      code: 'oauth_client.owner_super_admin_only',
    });
    expect((await register(admin, { owner_user_id: user.id })).body).toMatchObject({
      code: 'oauth_client.owner_not_developer',
    });
    expect((await register(admin, { owner_user_id: UNKNOWN_ID })).body).toMatchObject({
      code: 'oauth_client.unknown_owner',
    });
    const developer = await createUser(t.app, ['role_user', 'role_developer']);
    const created = await register(admin, { owner_user_id: developer.id, is_first_party: true }).expect(201);
    const client = (await t.as(developer.token).get(`/v1/oauth/clients/${created.body.client.id}`)).body;
    expect(client).toMatchObject({ owner_user_id: developer.id, is_first_party: true });
  });
});

describe('reading, changing and deleting clients', () => {
  it('shows owners their own clients, admins all; others get 404', async () => {
    const owner = await createUser(t.app);
    const other = await createUser(t.app);
    const id = await newClient(owner.token);
    expect((await t.as(owner.token).get('/v1/oauth/clients').expect(200)).body.data.map((c) => c.id)).toEqual([id]);
    expect((await t.as(other.token).get('/v1/oauth/clients')).body).toEqual({ data: [] });
    expect((await t.as(admin).get('/v1/oauth/clients/all').expect(200)).body.data.map((c) => c.id)).toContain(id);
    expect((await t.as(owner.token).get('/v1/oauth/clients/all')).status).toBe(403);
    for (const [method, url, body] of [
      ['GET', `/v1/oauth/clients/${id}`, undefined],
      ['PATCH', `/v1/oauth/clients/${id}`, { name: 'x' }],
      ['POST', `/v1/oauth/clients/${id}/regenerate-secret`, undefined],
      ['DELETE', `/v1/oauth/clients/${id}`, undefined],
    ] as const) {
      expect((await t.as(other.token).raw({ method, url, payload: body })).body).toEqual({
        error: 'NotFound',
        message: 'OAuth client not found',
        code: 'oauth_client.not_found',
      });
    }
    expect((await t.as(admin).get(`/v1/oauth/clients/${id}`)).status).toBe(200);
    expect((await t.as(null).get('/v1/oauth/clients')).status).toBe(401);
  });

  it('moves a client to another owner only by a super admin, and only to a developer', async () => {
    const owner = await createUser(t.app, ['role_user', 'role_developer']);
    const id = await newClient(owner.token);
    const developer = await createUser(t.app, ['role_user', 'role_developer']);
    expect(
      (await t.as(owner.token).patch(`/v1/oauth/clients/${id}`, { owner_user_id: developer.id })).body,
    ).toMatchObject({ code: 'oauth_client.owner_super_admin_only' });
    const plain = await createUser(t.app);
    expect((await t.as(admin).patch(`/v1/oauth/clients/${id}`, { owner_user_id: plain.id })).body).toMatchObject({
      code: 'oauth_client.owner_not_developer',
    });
    const moved = await t.as(admin).patch(`/v1/oauth/clients/${id}`, { owner_user_id: developer.id });
    expect(moved.body).toMatchObject({ owner_user_id: developer.id });
    expect((await t.as(owner.token).get(`/v1/oauth/clients/${id}`)).status).toBe(404);
    expect((await t.as(developer.token).get(`/v1/oauth/clients/${id}`)).status).toBe(200);
  });

  it('changes only the fields sent and audits their names', async () => {
    const owner = await createUser(t.app);
    const id = await newClient(owner.token);
    const response = await t
      .as(owner.token)
      .patch(`/v1/oauth/clients/${id}`, { name: 'Harbour log 2', redirect_uris: ['https://new.example.org/cb'] })
      .expect(200);
    expect(response.body).toMatchObject({
      name: 'Harbour log 2',
      redirect_uris: ['https://new.example.org/cb'],
      description: null,
      client_type: 'confidential',
    });
    expect((await eventsOf(id)).at(-1)).toEqual({
      event_type: 'client_updated',
      metadata: { fields: ['name', 'redirect_uris'] },
    });
    expect((await t.as(owner.token).patch(`/v1/oauth/clients/${id}`, {})).status).toBe(400);
    expect((await t.as(owner.token).patch(`/v1/oauth/clients/${id}`, { is_first_party: true })).body).toMatchObject({
      code: 'oauth_client.first_party_forbidden',
    });
  });

  it('regenerates a secret: the new one is shown once, the old hash is gone', async () => {
    const owner = await createUser(t.app);
    const created = (await register(owner.token).expect(201)).body;
    const response = await t
      .as(owner.token)
      .post(`/v1/oauth/clients/${created.client.id}/regenerate-secret`)
      .expect(200);
    const body = response.body;
    expect(body).toEqual({
      client_id: created.client.id,
      client_secret: expect.stringMatching(/^wgcs_/),
      message: expect.any(String),
    });
    expect(body.client_secret).not.toBe(created.client_secret);
    expect(await secretHashOf(created.client.id)).toBe(hashToken(body.client_secret));
    expect((await eventsOf(created.client.id)).map((e) => e.event_type)).toEqual([
      'client_created',
      'client_secret_regenerated',
    ]);

    const publicClient = await newClient(owner.token, { client_type: 'public' });
    const refused = await t.as(owner.token).post(`/v1/oauth/clients/${publicClient}/regenerate-secret`);
    expect({ status: refused.status, code: (refused.body as { code?: string }).code }).toEqual({
      status: 400,
      code: 'oauth_client.public_has_no_secret',
    });
  });

  it('lets nobody change or delete a first-party client, super admins included; only a super admin replaces its secret', async () => {
    const developer = await createUser(t.app, ['role_user', 'role_developer']);
    const id = await newClient(admin, { owner_user_id: developer.id, is_first_party: true });
    const outcome = async (request: Promise<RawAnswer>) => {
      const response = await request;
      return { status: response.status, code: response.status < 300 ? undefined : response.body.code };
    };
    const immutable = { status: 403, code: 'oauth_client.first_party_immutable' };
    for (const token of [developer.token, admin]) {
      expect(await outcome(t.as(token).patch(`/v1/oauth/clients/${id}`, { name: 'x' }))).toEqual(immutable);
      expect(await outcome(t.as(token).patch(`/v1/oauth/clients/${id}`, { is_first_party: false }))).toEqual(immutable);
      expect(await outcome(t.as(token).delete(`/v1/oauth/clients/${id}`))).toEqual(immutable);
    }
    // The system key is not allowed on these routes at all.
    expect(await outcome(t.as(TEST_SYSTEM_KEY).delete(`/v1/oauth/clients/${id}`))).toEqual({
      status: 403,
      code: 'auth.system_key_not_permitted',
    });
    expect(await outcome(t.as(developer.token).post(`/v1/oauth/clients/${id}/regenerate-secret`))).toEqual({
      status: 403,
      code: 'oauth_client.first_party_locked',
    });
    // Retiring it: its secret replaced (and the new one discarded); the client is unchanged otherwise.
    expect((await t.as(admin).post(`/v1/oauth/clients/${id}/regenerate-secret`)).status).toBe(200);
    expect((await t.as(admin).get(`/v1/oauth/clients/${id}`)).body).toMatchObject({
      is_first_party: true,
      is_active: true,
    });
  });

  it('deletes a client (204) and audits it', async () => {
    const owner = await createUser(t.app);
    const id = await newClient(owner.token);
    await t.as(owner.token).delete(`/v1/oauth/clients/${id}`).expect(204);
    expect((await t.as(owner.token).get(`/v1/oauth/clients/${id}`)).status).toBe(404);
    expect((await eventsOf(id)).map((e) => e.event_type)).toEqual(['client_created', 'client_deleted']);
  });
});

describe('API keys and OAuth clients', () => {
  // Issue 36, high: a key made with no scopes (a device key on a phone) added a redirect URI and regenerated the
  // secret of its owner's client, which sends the codes of every user who once consented to it to the attacker.
  it('refuses a key without oauth_clients:* every client route, naming the permission; the client stays as it was', async () => {
    const developer = await createUser(t.app, ['role_user', 'role_developer']);
    const { client, client_secret: secret } = (await register(developer.token).expect(201)).body;
    const keyOf = async (scopes: string[]) =>
      (await createApiKey(t.app, developer.token, { name: `key ${scopes.join(' ')}`, scopes })).key;
    for (const key of [await keyOf([]), await keyOf(['api_keys:read', 'audit:read_own', 'integrations:write'])]) {
      for (const [method, url, body, permission] of [
        [
          'PATCH',
          `/v1/oauth/clients/${client.id}`,
          { redirect_uris: ['https://harbour.example.org/callback', 'https://attacker.example.net/cb'] },
          'oauth_clients:write',
        ],
        ['POST', `/v1/oauth/clients/${client.id}/regenerate-secret`, undefined, 'oauth_clients:write'],
        [
          'POST',
          '/v1/oauth/clients',
          { name: 'Lookalike', redirect_uris: ['https://attacker.example.net/cb'] },
          'oauth_clients:write',
        ],
        ['GET', `/v1/oauth/clients/${client.id}`, undefined, 'oauth_clients:read'],
        ['GET', '/v1/oauth/clients', undefined, 'oauth_clients:read'],
        ['DELETE', `/v1/oauth/clients/${client.id}`, undefined, 'oauth_clients:delete'],
      ] as const) {
        const response = await t.as(key).raw({ method, url, payload: body });
        expect({ method, url, status: response.status, body: response.body }).toEqual({
          method,
          url,
          status: 403,
          body: forbidden(permission),
        });
      }
    }
    const unchanged = (await t.as(developer.token).get(`/v1/oauth/clients/${client.id}`).expect(200)).body;
    expect(unchanged.redirect_uris).toEqual(['https://harbour.example.org/callback']);
    expect(await secretHashOf(client.id)).toBe(hashToken(secret!));
    expect((await t.as(developer.token).get('/v1/oauth/clients').expect(200)).body.data).toHaveLength(1);
  });

  it("lets a key granted oauth_clients:read/write/delete (the developer role holds them) manage its owner's clients", async () => {
    const developer = await createUser(t.app, ['role_user', 'role_developer']);
    const id = await newClient(developer.token);
    const key = (
      await createApiKey(t.app, developer.token, {
        name: 'ci',
        scopes: ['oauth_clients:read', 'oauth_clients:write', 'oauth_clients:delete'],
      })
    ).key;
    const ci = t.as(key);
    expect((await ci.get('/v1/oauth/clients').expect(200)).body.data.map((c) => c.id)).toEqual([id]);
    expect((await ci.patch(`/v1/oauth/clients/${id}`, { name: 'Renamed by CI' }).expect(200)).body.name).toBe(
      'Renamed by CI',
    );
    expect((await ci.post(`/v1/oauth/clients/${id}/regenerate-secret`)).status).toBe(200);
    expect((await ci.delete(`/v1/oauth/clients/${id}`)).status).toBe(204);
    // A user without the developer role manages clients with their session, as the spec says; no key of theirs can hold these.
    const user = await createUser(t.app);
    expect((await register(user.token)).status).toBe(201);
  });
});
