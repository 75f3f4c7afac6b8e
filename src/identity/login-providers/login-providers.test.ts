import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { unchecked } from '../../../test/client.js';
import {
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
    const { body } = await t.as(null).get('/v1/platforms').expect(200);
    expect(Object.keys(body)).toEqual(['data']);
    expect(body.data.map((p) => p.slug)).toEqual([
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
    const signIn = () => t.as(TEST_SYSTEM_KEY).post('/v1/users/oauth', body);
    expect((await signIn()).body).toMatchObject({ code: 'oauth_sign_in.provider_disabled' });
    expect((await t.as(admin).patch('/v1/platforms/google/enabled', { enabled: true })).status).toBe(200);
    expect((await signIn()).status).toBe(200);
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
      const gitlab = await other.as(null).get('/v1/platforms/gitlab').expect(200);
      expect(gitlab.body.data).toMatchObject({ name: 'GitLab', slug: 'gitlab', is_oauth: true, enabled: false });
      expect((await other.as(null).get('/v1/platforms/email').expect(200)).body.data).toMatchObject({
        name: 'Email',
        is_oauth: false,
        enabled: true,
      });
    } finally {
      await other.close();
    }
  });

  it('lists only the enabled platforms', async () => {
    const response = await t.as(null).get('/v1/platforms/enabled');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ data: [platformShape] });
  });

  it('finds a platform by slug (any case) or by id, without credentials', async () => {
    const bySlug = await t.as(null).get('/v1/platforms/EMAIL');
    expect(bySlug.status).toBe(200);
    expect(bySlug.body).toEqual({ data: platformShape, _links: { self: 'http://localhost/v1/platforms/EMAIL' } });
    const byId = await t.as(null).get(`/v1/platforms/${discordId}`).expect(200);
    expect(byId.body.data).toMatchObject({ id: discordId, slug: 'discord', is_oauth: true, enabled: false });
  });

  it.each([
    ['an unknown slug', 'nope'],
    ['an unknown id', '00000000-0000-4000-8000-000000000000'],
  ])('answers 404 for %s', async (_case, key) => {
    const response = await t.as(null).get(`/v1/platforms/${key}`);
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ error: 'NotFound', message: 'Platform not found', code: 'platform.not_found' });
  });

  describe('PATCH enabled', () => {
    it('needs credentials and settings:write', async () => {
      const anonymous = await t.as(null).patch('/v1/platforms/discord/enabled', { enabled: true });
      expect(anonymous.status).toBe(401);
      const user = await createUser(t.app);
      const plain = await t.as(user.token).patch('/v1/platforms/discord/enabled', { enabled: true });
      expect(plain.status).toBe(403);
      expect(plain.body).toEqual(forbidden('settings:write'));
    });

    it('rejects a missing or non-boolean enabled with 400 naming the field', async () => {
      const missing = await t.as(admin).patch('/v1/platforms/discord/enabled', unchecked({}));
      expect(missing.status).toBe(400);
      expect(missing.body).toEqual({
        error: 'BadRequest',
        message: "Body field 'enabled' is required",
        code: 'request.validation',
      });
      const wrong = await t
        .as(admin)
        .patch('/v1/platforms/discord/enabled', unchecked({ enabled: 'yes' }))
        .expect(400);
      expect(wrong.body.message).toBe("Body field 'enabled' must be boolean");
    });

    it('answers 404 for an unknown platform', async () => {
      const response = await t.as(admin).patch('/v1/platforms/nope/enabled', { enabled: true });
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ error: 'NotFound', message: 'Platform not found', code: 'platform.not_found' });
    });

    it('enables a platform, answers { data }, and audits the change once', async () => {
      const before = (await settingEvents()).length;
      const response = await t.as(admin).patch(`/v1/platforms/${discordId}/enabled`, { enabled: true }).expect(200);
      expect(Object.keys(response.body)).toEqual(['data']);
      expect(response.body.data).toMatchObject({ slug: 'discord', enabled: true });
      expect((await t.as(null).get('/v1/platforms/enabled').expect(200)).body.data.map((p) => p.slug)).toEqual([
        'discord',
        'email',
      ]);
      const again = await t.as(admin).patch('/v1/platforms/discord/enabled', { enabled: true });
      expect(again.status).toBe(200);
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
      const before = await t.as(null).get('/v1/platforms/email').expect(200);
      const events = (await settingEvents()).length;
      const response = await t.as(admin).patch('/v1/platforms/email/settings', {});
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ success: true, message: 'No changes requested', platform: before.body.data });
      expect(await settingEvents()).toHaveLength(events);
      const noBody = await t.as(admin).patch('/v1/platforms/email/settings');
      expect(noBody.status).toBe(200);
      expect(noBody.body).toMatchObject({ success: true, message: 'No changes requested' });
    });

    it('changes only the fields sent and writes one audit event per changed setting', async () => {
      const admins = await t.database.db
        .selectFrom('users')
        .select('id')
        .where('username', '=', 'admin')
        .executeTakeFirstOrThrow();
      expect((await t.as(admin).patch('/v1/platforms/discord/enabled', { enabled: true })).status).toBe(200);
      const before = (await settingEvents()).length;
      const response = await t.as(admin).patch('/v1/platforms/discord/settings', {
        two_factor_required: true,
        registration_enabled: false,
        enabled: true,
      });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
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
      const settings = { two_factor_required: true };
      expect((await t.as(admin).patch('/v1/platforms/discord/settings', settings)).status).toBe(200);
      const before = (await settingEvents()).length;
      const response = await t.as(admin).patch('/v1/platforms/discord/settings', settings);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ success: true, message: 'Platform settings already as requested' });
      expect(await settingEvents()).toHaveLength(before);
    });

    it('answers 404 for an unknown platform, also with an empty body', async () => {
      for (const body of [{}, { enabled: false }]) {
        const response = await t.as(admin).patch('/v1/platforms/nope/settings', body);
        expect(response.status).toBe(404);
        expect(response.body).toEqual({
          error: 'NotFound',
          message: 'Platform not found',
          code: 'platform.not_found',
        });
      }
    });

    it('rejects non-boolean fields with 400, ignores unknown ones, and needs settings:write', async () => {
      const wrong = await t
        .as(admin)
        .patch('/v1/platforms/discord/settings', unchecked({ registration_enabled: 1 }))
        .expect(400);
      expect(wrong.body.message).toBe("Body field 'registration_enabled' must be boolean");
      // Undeclared fields are dropped: the name cannot be changed through this route.
      const unknown = await t.as(admin).patch('/v1/platforms/discord/settings', unchecked({ name: 'Other' }));
      expect(unknown.status).toBe(200);
      expect(unknown.body).toMatchObject({ message: 'No changes requested', platform: { name: 'Discord' } });
      const user = await createUser(t.app);
      expect((await t.as(user.token).patch('/v1/platforms/discord/settings', {})).status).toBe(403);
    });

    it('feeds the lookups other modules use', async () => {
      const { loginProviders: platforms } = t.app.services;
      expect(
        (await t.as(admin).patch('/v1/platforms/discord/settings', { enabled: true, registration_enabled: false }))
          .status,
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
      await t
        .as(admin)
        .patch('/v1/platforms/discord/settings', { enabled: false, registration_enabled: true })
        .expect(200);
      expect(await platforms.registrationOpen('discord')).toBe(false);
    });
  });

  it('a disabled email platform refuses logins through it (401) until it is enabled again', async () => {
    const user = await createUser(t.app);
    const loginAs = () => t.as(null).post('/v1/auth/login', { identifier: user.username, password: user.password });
    expect((await t.as(admin).patch('/v1/platforms/email/enabled', { enabled: false })).status).toBe(200);
    try {
      const refused = await loginAs();
      expect(refused.status).toBe(401);
      expect(refused.body).toEqual({
        error: 'Unauthorized',
        message: 'Invalid credentials',
        code: 'login.invalid_credentials',
      });
      expect(await t.app.services.loginProviders.registrationOpen('email')).toBe(false);
      // Existing sessions keep working: disabling stops new sign-ins only.
      expect((await t.as(user.token).get(`/v1/users/${user.id}/accounts`)).status).toBe(200);
    } finally {
      await t.as(admin).patch('/v1/platforms/email/settings', { enabled: true });
    }
    expect((await loginAs()).status).toBe(200);
  });
});
