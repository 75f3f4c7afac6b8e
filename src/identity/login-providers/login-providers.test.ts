import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  bearer,
  buildTestApp,
  createUser,
  forbidden,
  login,
  TEST_ADMIN,
  TEST_SYSTEM_KEY,
  type TestApp,
} from '../../../test/helpers.js';

describe('platforms', () => {
  let t: TestApp;
  let admin: string;
  let discordId: string;
  // A fresh app per test: the tests switch the same platforms on and off and count their audit events.
  beforeEach(async () => {
    t = await buildTestApp();
    admin = await login(t.app, 'admin', TEST_ADMIN.password);
    const discord = await t.database.db
      .selectFrom('platforms')
      .select('id')
      .where('slug', '=', 'discord')
      .executeTakeFirstOrThrow();
    discordId = discord.id;
  });
  afterEach(() => t.close());

  const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, headers });
  const patch = (url: string, payload: unknown, token = admin) =>
    t.app.inject({ method: 'PATCH', url, payload: payload as object, headers: bearer(token) });
  const settingEvents = () =>
    t.database.db
      .selectFrom('audit_events')
      .selectAll()
      .where('event_type', '=', 'platform_setting_changed')
      .orderBy('created_at')
      .execute();
  const platformShape = {
    id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    name: 'Email',
    slug: 'email',
    is_oauth: false,
    enabled: true,
    two_factor_supported: true,
    two_factor_required: false,
    registration_enabled: true,
    created_at: expect.any(String),
    updated_at: expect.any(String),
  };

  it('lists every platform without credentials', async () => {
    const response = await get('/v1/platforms');
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(Object.keys(body)).toEqual(['data']);
    expect(body.data.map((p: { slug: string }) => p.slug)).toEqual([
      'apple',
      'discord',
      'email',
      'github',
      'google',
      'microsoft',
      'twitch',
    ]);
    expect(body.data[2]).toEqual(platformShape);
  });

  it('ships the common social login providers disabled; sign-in through one works once it is enabled', async () => {
    const body = { email: null, name: 'Ada', oauthProvider: 'google', oauthProviderId: 'g-ada', image: null };
    const signIn = () =>
      t.app.inject({ method: 'POST', url: '/v1/users/oauth', headers: bearer(TEST_SYSTEM_KEY), payload: body });
    expect((await signIn()).json()).toMatchObject({ code: 'oauth_sign_in.provider_disabled' });
    expect((await patch('/v1/platforms/google/enabled', { enabled: true })).statusCode).toBe(200);
    expect((await signIn()).statusCode).toBe(200);
  });

  it('adds the platforms OAUTH_PLATFORMS names at start, disabled, and leaves existing ones as they are', async () => {
    const other = await buildTestApp({
      config: {
        oauthPlatforms: [
          { slug: 'gitlab', name: 'GitLab' },
          { slug: 'email', name: 'Renamed' },
        ],
      },
    });
    try {
      const gitlab = await other.app.inject({ method: 'GET', url: '/v1/platforms/gitlab' });
      expect(gitlab.json().data).toMatchObject({ name: 'GitLab', slug: 'gitlab', is_oauth: true, enabled: false });
      expect((await other.app.inject({ method: 'GET', url: '/v1/platforms/email' })).json().data).toMatchObject({
        name: 'Email',
        is_oauth: false,
        enabled: true,
      });
    } finally {
      await other.close();
    }
  });

  it('lists only the enabled platforms', async () => {
    const response = await get('/v1/platforms/enabled');
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ data: [platformShape] });
  });

  it('finds a platform by slug (any case) or by id, without credentials', async () => {
    const bySlug = await get('/v1/platforms/EMAIL');
    expect(bySlug.statusCode).toBe(200);
    expect(bySlug.json()).toEqual({ data: platformShape, _links: { self: 'http://localhost/v1/platforms/EMAIL' } });
    const byId = await get(`/v1/platforms/${discordId}`);
    expect(byId.statusCode).toBe(200);
    expect(byId.json().data).toMatchObject({ id: discordId, slug: 'discord', is_oauth: true, enabled: false });
  });

  it.each([
    ['an unknown slug', 'nope'],
    ['an unknown id', '00000000-0000-4000-8000-000000000000'],
  ])('answers 404 for %s', async (_case, key) => {
    const response = await get(`/v1/platforms/${key}`);
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ error: 'NotFound', message: 'Platform not found', code: 'platform.not_found' });
  });

  describe('PATCH enabled', () => {
    it('needs credentials and settings:write', async () => {
      const anonymous = await t.app.inject({
        method: 'PATCH',
        url: '/v1/platforms/discord/enabled',
        payload: { enabled: true },
      });
      expect(anonymous.statusCode).toBe(401);
      const user = await createUser(t.app);
      const plain = await patch('/v1/platforms/discord/enabled', { enabled: true }, user.token);
      expect(plain.statusCode).toBe(403);
      expect(plain.json()).toEqual(forbidden('settings:write'));
    });

    it('rejects a missing or non-boolean enabled with 400 naming the field', async () => {
      const missing = await patch('/v1/platforms/discord/enabled', {});
      expect(missing.statusCode).toBe(400);
      expect(missing.json()).toEqual({
        error: 'BadRequest',
        message: "Body field 'enabled' is required",
        code: 'request.validation',
      });
      const wrong = await patch('/v1/platforms/discord/enabled', { enabled: 'yes' });
      expect(wrong.statusCode).toBe(400);
      expect(wrong.json().message).toBe("Body field 'enabled' must be boolean");
    });

    it('answers 404 for an unknown platform', async () => {
      const response = await patch('/v1/platforms/nope/enabled', { enabled: true });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ error: 'NotFound', message: 'Platform not found', code: 'platform.not_found' });
    });

    it('enables a platform, answers { data }, and audits the change once', async () => {
      const before = (await settingEvents()).length;
      const response = await patch(`/v1/platforms/${discordId}/enabled`, { enabled: true });
      expect(response.statusCode).toBe(200);
      expect(Object.keys(response.json())).toEqual(['data']);
      expect(response.json().data).toMatchObject({ slug: 'discord', enabled: true });
      expect((await get('/v1/platforms/enabled')).json().data.map((p: { slug: string }) => p.slug)).toEqual([
        'discord',
        'email',
      ]);
      const again = await patch('/v1/platforms/discord/enabled', { enabled: true });
      expect(again.statusCode).toBe(200);
      const events = await settingEvents();
      expect(events).toHaveLength(before + 1);
      expect(events.at(-1)).toMatchObject({
        resource_type: 'platform',
        resource_id: discordId,
        metadata: { platform: 'discord', setting: 'enabled', old_value: false, new_value: true },
      });
    });
  });

  describe('PATCH settings', () => {
    it('with an empty body returns the platform unchanged: No changes requested', async () => {
      const before = await get('/v1/platforms/email');
      const events = (await settingEvents()).length;
      const response = await patch('/v1/platforms/email/settings', {});
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ success: true, message: 'No changes requested', platform: before.json().data });
      expect(await settingEvents()).toHaveLength(events);
      const noBody = await t.app.inject({
        method: 'PATCH',
        url: '/v1/platforms/email/settings',
        headers: bearer(admin),
      });
      expect(noBody.statusCode).toBe(200);
      expect(noBody.json()).toMatchObject({ success: true, message: 'No changes requested' });
    });

    it('changes only the fields sent and writes one audit event per changed setting', async () => {
      const admins = await t.database.db
        .selectFrom('users')
        .select('id')
        .where('username', '=', 'admin')
        .executeTakeFirstOrThrow();
      expect((await patch('/v1/platforms/discord/enabled', { enabled: true })).statusCode).toBe(200);
      const before = (await settingEvents()).length;
      const response = await patch('/v1/platforms/discord/settings', {
        two_factor_required: true,
        registration_enabled: false,
        enabled: true,
      });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({
        success: true,
        message: 'Platform settings updated: two_factor_required, registration_enabled',
        platform: expect.objectContaining({
          slug: 'discord',
          enabled: true,
          two_factor_required: true,
          registration_enabled: false,
        }),
      });
      // One transaction: both events carry the same timestamp, so their order is not asserted.
      const events = (await settingEvents()).slice(before);
      expect(events).toHaveLength(2);
      expect(events.map((e) => e.metadata)).toEqual(
        expect.arrayContaining([
          { platform: 'discord', setting: 'two_factor_required', old_value: false, new_value: true },
          { platform: 'discord', setting: 'registration_enabled', old_value: true, new_value: false },
        ]),
      );
      expect(events[0]).toMatchObject({ user_id: admins.id, actor_id: admins.id, status: 'success' });
    });

    it('says so when every value is already as requested, without audit events', async () => {
      expect((await patch('/v1/platforms/discord/settings', { two_factor_required: true })).statusCode).toBe(200);
      const before = (await settingEvents()).length;
      const response = await patch('/v1/platforms/discord/settings', { two_factor_required: true });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toMatchObject({ success: true, message: 'Platform settings already as requested' });
      expect(await settingEvents()).toHaveLength(before);
    });

    it('answers 404 for an unknown platform, also with an empty body', async () => {
      for (const body of [{}, { enabled: false }]) {
        const response = await patch('/v1/platforms/nope/settings', body);
        expect(response.statusCode).toBe(404);
        expect(response.json()).toEqual({
          error: 'NotFound',
          message: 'Platform not found',
          code: 'platform.not_found',
        });
      }
    });

    it('rejects non-boolean fields with 400, ignores unknown ones, and needs settings:write', async () => {
      const wrong = await patch('/v1/platforms/discord/settings', { registration_enabled: 1 });
      expect(wrong.statusCode).toBe(400);
      expect(wrong.json().message).toBe("Body field 'registration_enabled' must be boolean");
      // Undeclared fields are dropped: the name cannot be changed through this route.
      const unknown = await patch('/v1/platforms/discord/settings', { name: 'Other' });
      expect(unknown.statusCode).toBe(200);
      expect(unknown.json()).toMatchObject({ message: 'No changes requested', platform: { name: 'Discord' } });
      const user = await createUser(t.app);
      expect((await patch('/v1/platforms/discord/settings', {}, user.token)).statusCode).toBe(403);
    });

    it('feeds the lookups other modules use', async () => {
      const { loginProviders: platforms } = t.app.services;
      expect(
        (await patch('/v1/platforms/discord/settings', { enabled: true, registration_enabled: false })).statusCode,
      ).toBe(200);
      expect(await platforms.isEnabled('discord')).toBe(true);
      expect(await platforms.registrationOpen('discord')).toBe(false);
      expect(await platforms.displayName('discord')).toBe('Discord');
      expect(await platforms.registrationOpen('email')).toBe(true);
      expect(await platforms.isEnabled('nope')).toBe(false);
      expect(await platforms.registrationOpen('nope')).toBe(false);
      expect(await platforms.displayName('nope')).toBe('nope');
      expect((await platforms.find('email'))?.name).toBe('Email');
      const email = (await platforms.find('email'))!;
      expect((await platforms.find(email.id))?.slug).toBe('email');
      await patch('/v1/platforms/discord/settings', { enabled: false, registration_enabled: true });
      expect(await platforms.registrationOpen('discord')).toBe(false);
    });
  });

  it('a disabled email platform refuses logins through it (401) until it is enabled again', async () => {
    const user = await createUser(t.app);
    const loginAs = () =>
      t.app.inject({
        method: 'POST',
        url: '/v1/auth/login',
        payload: { identifier: user.username, password: user.password },
      });
    expect((await patch('/v1/platforms/email/enabled', { enabled: false })).statusCode).toBe(200);
    try {
      const refused = await loginAs();
      expect(refused.statusCode).toBe(401);
      expect(refused.json()).toEqual({
        error: 'Unauthorized',
        message: 'Invalid credentials',
        code: 'login.invalid_credentials',
      });
      expect(await t.app.services.loginProviders.registrationOpen('email')).toBe(false);
      // Existing sessions keep working: disabling stops new sign-ins only.
      expect((await get(`/v1/users/${user.id}/accounts`, bearer(user.token))).statusCode).toBe(200);
    } finally {
      await patch('/v1/platforms/email/settings', { enabled: true });
    }
    expect((await loginAs()).statusCode).toBe(200);
  });
});
