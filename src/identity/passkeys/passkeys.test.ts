import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generate } from 'otplib';
import { unchecked, type RequestBody } from '../../../test/client.js';
import { buildTestApp, createApiKey, createUser, signedInBody, type TestApp } from '../../../test/helpers.js';
import { softwareAuthenticator } from '../../../test/webauthn-authenticator.js';
import { PASSKEY_CHALLENGE_TTL_SECS } from './service.js';

const ORIGIN = 'https://id.waygate.test';

describe('passkeys (WebAuthn)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ config: { publicUrl: ORIGIN, corsOrigins: ['https://app.waygate.test'] } });
  });
  afterAll(() => t.close());

  const creationOptions = async (token: string) =>
    (await t.as(token).post('/v1/users/me/passkeys/options', {}).expect(200)).body;

  /** A user with a passkey on a fresh software authenticator. */
  async function userWithPasskey(options: { userVerification?: boolean; roles?: string[] } = {}) {
    const user = await createUser(t.app, options.roles);
    const authenticator = softwareAuthenticator(ORIGIN, options);
    const response = authenticator.create(await creationOptions(user.token));
    const registered = await t.as(user.token).post('/v1/users/me/passkeys', { name: 'Phone', response }).expect(201);
    return { user, authenticator, passkey: registered.body };
  }
  const signInOptions = async (body: { identifier?: string } = {}) =>
    (await t.as(null).post('/v1/auth/passkey/options', body).expect(200)).body;
  const signIn = (response: RequestBody<'post', '/v1/auth/passkey'>['response']) =>
    t.as(null).post('/v1/auth/passkey', { response });

  it('registers a resident passkey for the signed-in user, lists, renames and removes it, with an audit event each', async () => {
    const user = await createUser(t.app);
    const creation = await creationOptions(user.token);
    expect(creation).toMatchObject({
      rp: { id: 'id.waygate.test' },
      user: { name: user.username },
      attestation: 'none',
      authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
    });
    const authenticator = softwareAuthenticator(ORIGIN);
    const api = t.as(user.token);
    const created = await api
      .post('/v1/users/me/passkeys', { name: 'Phone', response: authenticator.create(creation) })
      .expect(201);
    expect(created.body).toMatchObject({
      name: 'Phone',
      user_verified: true,
      transports: ['internal'],
      last_used_at: null,
    });
    const id = created.body.id;
    expect(created.headers.location).toContain(`/v1/users/me/passkeys/${id}`);

    expect((await api.get('/v1/users/me/passkeys').expect(200)).body.data).toEqual([created.body]);
    const renamed = await api.patch(`/v1/users/me/passkeys/${id}`, { name: 'Work phone' }).expect(200);
    expect(renamed.body.name).toBe('Work phone');
    expect((await api.delete(`/v1/users/me/passkeys/${id}`)).status).toBe(204);
    expect((await api.get('/v1/users/me/passkeys').expect(200)).body.data).toEqual([]);
    const events = await t.database.db
      .selectFrom('audit_events')
      .select('event_type')
      .where('user_id', '=', user.id)
      .where('event_type', 'like', 'passkey_%')
      .orderBy('created_at')
      .execute();
    expect(events.map((event) => event.event_type)).toEqual(['passkey_added', 'passkey_renamed', 'passkey_removed']);
  });

  it('a challenge works once: the same registration response again is refused', async () => {
    const user = await createUser(t.app);
    const response = softwareAuthenticator(ORIGIN).create(await creationOptions(user.token));
    expect((await t.as(user.token).post('/v1/users/me/passkeys', { response })).status).toBe(201);
    const again = await t.as(user.token).post('/v1/users/me/passkeys', { response }).expect(400);
    expect(again.body.code).toBe('passkey.invalid_response');
  });

  it('a challenge expires after 5 minutes (by the clock)', async () => {
    const { authenticator } = await userWithPasskey();
    const options = await signInOptions();
    t.clock.advance(PASSKEY_CHALLENGE_TTL_SECS * 1000 + 1000);
    const late = await signIn(authenticator.get(options))
      .expect(401)
      .finally(() => t.clock.advance(-(PASSKEY_CHALLENGE_TTL_SECS * 1000 + 1000)));
    expect(late.body.code).toBe('passkey.sign_in_failed');
  });

  it('signs in without a username, answering as POST /v1/auth/login, and the session works', async () => {
    const { user, authenticator } = await userWithPasskey();
    const options = await signInOptions();
    expect(options.allowCredentials ?? []).toEqual([]);
    const response = await signIn(authenticator.get(options)).expect(200);
    expect(response.body).toMatchObject({
      ...signedInBody({ email: `${user.username}@example.org`, username: user.username, user_id: user.id }),
      provider: 'passkey',
    });
    expect((await t.as(response.body.session_token).get('/v1/users/me')).status).toBe(200);
    // The same assertion again: its challenge is spent.
    expect((await signIn(authenticator.get(options))).status).toBe(401);
  });

  it("with an identifier lists that user's passkeys; an unknown identifier answers like none", async () => {
    const { user, passkey } = await userWithPasskey();
    const credentialId = (
      await t.database.db
        .selectFrom('passkeys')
        .select('credential_id')
        .where('id', '=', passkey.id)
        .executeTakeFirstOrThrow()
    ).credential_id;
    expect((await signInOptions({ identifier: user.username.toUpperCase() })).allowCredentials).toEqual([
      { id: credentialId, type: 'public-key', transports: ['internal'] },
    ]);
    expect((await signInOptions({ identifier: 'nobody_at_all' })).allowCredentials ?? []).toEqual([]);
  });

  it('refuses a cloned authenticator (a counter that does not go forward) and records passkey_clone_suspected', async () => {
    const { user, authenticator } = await userWithPasskey();
    expect((await signIn(authenticator.get(await signInOptions(), undefined, 5))).status).toBe(200);
    const clone = await signIn(authenticator.get(await signInOptions(), undefined, -2)).expect(401);
    expect(clone.body.code).toBe('passkey.cloned');
    const event = await t.database.db
      .selectFrom('audit_events')
      .selectAll()
      .where('user_id', '=', user.id)
      .where('event_type', '=', 'passkey_clone_suspected')
      .executeTakeFirstOrThrow();
    expect(event.metadata).toMatchObject({ counter: 3, stored_counter: 5 });
  });

  it('a passkey with user verification is both factors; one without asks for the 2FA code when 2FA is on', async () => {
    for (const userVerification of [true, false]) {
      const { user, authenticator } = await userWithPasskey({ userVerification });
      const { secret } = (await t.as(user.token).post('/v1/users/me/2fa/setup', {}).expect(200)).body;
      const enabled = await t.as(user.token).post('/v1/users/me/2fa/verify', { code: await generate({ secret }) });
      expect(enabled.status).toBe(200);
      const answer = (await signIn(authenticator.get(await signInOptions())).expect(200)).body;
      expect(answer.requires_2fa).toBe(!userVerification);
      expect(Boolean(answer.session_token)).toBe(userVerification);
    }
  });

  it('is the second factor after a password instead of a code, and counts towards the 2FA requirement', async () => {
    const { user, authenticator } = await userWithPasskey();
    const api = t.as(user.token);
    const requirement = await api.get('/v1/users/me/2fa/requirement');
    expect(requirement.body).toEqual({ required: false, enabled: false, reason: null, passkeys: 1, satisfied: true });
    const { secret } = (await api.post('/v1/users/me/2fa/setup', {}).expect(200)).body;
    expect((await api.post('/v1/users/me/2fa/verify', { code: await generate({ secret }) })).status).toBe(200);
    const temp_token = (
      await t.as(null).post('/v1/auth/login', { identifier: user.username, password: user.password }).expect(200)
    ).body.temp_token!;
    const secondFactorOptions = () => t.as(null).post('/v1/auth/2fa/passkey/options', { temp_token });

    const options = (await secondFactorOptions().expect(200)).body;
    expect(options.allowCredentials).toEqual([
      expect.objectContaining({ id: authenticator.credentials[0]!.id.toString('base64url') }),
    ]);
    const other = await userWithPasskey();
    const foreign = await t
      .as(null)
      .post('/v1/auth/2fa/passkey', { temp_token, response: other.authenticator.get(options) })
      .expect(401);
    expect(foreign.body.code).toBe('passkey.sign_in_failed');
    const done = await t.as(null).post('/v1/auth/2fa/passkey', {
      temp_token,
      response: authenticator.get((await secondFactorOptions().expect(200)).body),
    });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({
      ...signedInBody({ email: `${user.username}@example.org`, username: user.username, user_id: user.id }),
      provider: 'email',
    });
    const event = await t.database.db
      .selectFrom('audit_events')
      .select('metadata')
      .where('user_id', '=', user.id)
      .where('event_type', '=', '2fa_verified')
      .executeTakeFirstOrThrow();
    expect(event.metadata).toMatchObject({ code_type: 'passkey', provider: 'email' });
    // The temporary token is spent.
    expect((await secondFactorOptions().expect(401)).body.code).toBe('two_factor.invalid_challenge');
  });

  it('a session only for managing passkeys; the last passkey of an account without a password stays', async () => {
    const { user, passkey } = await userWithPasskey({ roles: ['role_user', 'role_developer'] });
    const { key } = await createApiKey(t.app, user.token, { name: 'script', scopes: [] });
    expect((await t.as(key).get('/v1/users/me/passkeys').expect(403)).body.code).toBe('session.session_required');
    await t.database.db
      .updateTable('platform_accounts')
      .set({ password_hash: null })
      .where('user_id', '=', user.id)
      .execute();
    const last = await t.as(user.token).delete(`/v1/users/me/passkeys/${passkey.id}`).expect(409);
    expect(last.body.code).toBe('passkey.last_credential');
    expect((await t.as(user.token).get('/v1/users/me/passkeys').expect(200)).body.data).toHaveLength(1);
  });

  it('has the GraphQL mutations of the REST routes, camelCase, with the same gates', async () => {
    // GraphQL's variables are typed as none in the document: they go unchecked.
    const gql = async (query: string, variables: Record<string, unknown> = {}, token?: string) =>
      (
        await t
          .as(token)
          .post('/v1/gql', { query, variables: unchecked(variables) })
          .expect(200)
      ).body as {
        data: Record<string, any> | null;
        errors?: { extensions: { code: string } }[];
      };
    const user = await createUser(t.app, ['role_user', 'role_developer']);
    const authenticator = softwareAuthenticator(ORIGIN);
    const { data: options } = await gql('mutation { passkeyCreationOptions }', {}, user.token);
    const registered = await gql(
      'mutation ($input: RegisterPasskeyInput!) { registerPasskey(input: $input) { id name userVerified deviceType lastUsedAt } }',
      { input: { name: 'Laptop', response: authenticator.create(options!.passkeyCreationOptions) } },
      user.token,
    );
    expect(registered.data!.registerPasskey).toEqual({
      id: expect.any(String),
      name: 'Laptop',
      userVerified: true,
      deviceType: 'singleDevice',
      lastUsedAt: null,
    });
    const id = registered.data!.registerPasskey.id as string;
    expect(
      (await gql('mutation ($id: ID!) { renamePasskey(id: $id, name: "Desk") { name } }', { id }, user.token)).data,
    ).toEqual({ renamePasskey: { name: 'Desk' } });
    expect((await gql('{ myPasskeys { id name } }', {}, user.token)).data).toEqual({
      myPasskeys: [{ id, name: 'Desk' }],
    });

    const gqlSignInOptions = (await gql('mutation { passkeySignInOptions }')).data!.passkeySignInOptions;
    const signedIn = await gql(
      'mutation ($r: JSON!) { signInWithPasskey(response: $r) { userId requires2fa tempToken provider sessionToken } }',
      { r: authenticator.get(gqlSignInOptions) },
    );
    expect(signedIn.data!.signInWithPasskey).toEqual({
      userId: user.id,
      requires2fa: false,
      tempToken: null,
      provider: 'passkey',
      sessionToken: expect.stringMatching(/^ses_/),
    });

    // As on REST: an API key is refused (a session only), whatever it holds.
    const { key } = await createApiKey(t.app, user.token, { name: 'script', scopes: [] });
    const refused = await gql('{ myPasskeys { id } }', {}, key);
    expect(refused.errors!.map((error) => error.extensions.code)).toEqual(['session.session_required']);
    expect((await gql('mutation ($id: ID!) { deletePasskey(id: $id) }', { id }, user.token)).data).toEqual({
      deletePasskey: true,
    });
  });
});
