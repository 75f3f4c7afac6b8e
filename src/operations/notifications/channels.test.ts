import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unchecked } from '../../../test/client.js';
import { buildTestApp, createUser, UNKNOWN_ID, type TestApp } from '../../../test/helpers.js';
import { startFakeGotify, type FakeGotify } from '../../../test/fakes/gotify.js';
import { startFakeNtfy, type FakeNtfy } from '../../../test/fakes/ntfy.js';
import { startFakeTelegram, type FakeTelegram } from '../../../test/fakes/telegram.js';
import { startFakePushService, type FakePushService } from '../../../test/fakes/push-service.js';
import { startFakeWebhookReceiver } from '../../../test/fakes/webhook-receiver.js';

const BOT_TOKEN = '123456:ABCdefGHIjklMNOpqrSTUvwxYZ012345';

describe('notification channels', () => {
  let t: TestApp;
  let ntfy: FakeNtfy;
  let gotify: FakeGotify;
  let telegram: FakeTelegram;
  let push: FakePushService;
  beforeAll(async () => {
    [ntfy, gotify, telegram, push] = await Promise.all([
      startFakeNtfy(),
      startFakeGotify(['AppToken.1']),
      startFakeTelegram(BOT_TOKEN, [4242]),
      startFakePushService(),
    ]);
    t = await buildTestApp({
      config: {
        notifications: {
          allowPrivateTargets: true,
          ntfyServer: undefined,
          telegramBotToken: BOT_TOKEN,
          telegramApiUrl: telegram.url,
        },
      },
    });
  });
  afterAll(async () => {
    await t.close();
    await Promise.all([ntfy.close(), gotify.close(), telegram.close(), push.close()]);
  });

  const channel = (fields: Record<string, unknown> = {}) => ({
    id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    enabled: true,
    has_token: false,
    last_status: null,
    last_error: null,
    last_success_at: null,
    last_failure_at: null,
    failing: false,
    created_at: expect.any(String),
    updated_at: expect.any(String),
    ...fields,
  });

  it('makes a webhook secret, shows it once, and signs the test notification with it', async () => {
    const user = await createUser(t.app);
    const api = t.as(user.token);
    const made = await api
      .post('/v1/notification-channels', {
        type: 'webhook',
        name: 'Hook',
        config: { url: 'http://127.0.0.1:9/placeholder' },
      })
      .expect(201);
    const secret = made.body.data.secret!;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(made.body.data).toEqual({
      ...channel({ type: 'webhook', name: 'Hook', config: { url: 'http://127.0.0.1:9/placeholder' }, has_token: true }),
      secret,
    });
    const receiver = await startFakeWebhookReceiver(secret);
    try {
      const id = made.body.data.id;
      // A secret of the client's choosing is not taken, nor a field the type does not have.
      const changed = { url: `${receiver.url}/hook`, secret: `whsec_${'A'.repeat(43)}=`, junk: 'x'.repeat(10_000) };
      const patched = await api.patch(`/v1/notification-channels/${id}`, { config: unchecked(changed) }).expect(200);
      expect(patched.body.data.config).toEqual({ url: `${receiver.url}/hook` });
      const listed = (await api.get('/v1/notification-channels').expect(200)).body;
      expect(listed.data).toEqual([
        channel({ id, type: 'webhook', name: 'Hook', config: { url: `${receiver.url}/hook` }, has_token: true }),
      ]);
      expect(JSON.stringify(listed)).not.toContain(secret.slice(6));
      const answer = (await api.post(`/v1/notification-channels/${id}/test`).expect(200)).body.data;
      expect(answer).toEqual({ ok: true, status: 204, detail: 'HTTP 204', retryable: false });
      expect(receiver.rejected).toEqual([]);
      expect(receiver.received).toHaveLength(1);
      expect(receiver.received[0]!.payload).toMatchObject({ type: 'test', title: 'Waygate test notification' });
    } finally {
      await receiver.close();
    }
  });

  it('answers what the far side said when it refuses', async () => {
    const api = t.as((await createUser(t.app)).token);
    const made = await api
      .post('/v1/notification-channels', {
        type: 'gotify',
        name: 'Gotify',
        config: { server: gotify.url, token: 'WrongToken' },
      })
      .expect(201);
    expect(made.body.data).toEqual(
      channel({ type: 'gotify', name: 'Gotify', config: { server: gotify.url }, has_token: true }),
    );
    const answer = (await api.post(`/v1/notification-channels/${made.body.data.id}/test`).expect(200)).body.data;
    expect(answer).toEqual({
      ok: false,
      status: 401,
      detail: 'Unauthorized: you need to provide a valid access token or user credentials to access this api',
      retryable: false,
    });
    // A new token replaces the old; the server is kept as sent.
    await api
      .patch(`/v1/notification-channels/${made.body.data.id}`, { config: { server: gotify.url, token: 'AppToken.1' } })
      .expect(200);
    const again = (await api.post(`/v1/notification-channels/${made.body.data.id}/test`).expect(200)).body.data;
    expect(again).toMatchObject({ ok: true, status: 200 });
    expect(gotify.messages.at(-1)).toMatchObject({ token: 'AppToken.1', title: 'Waygate test notification' });
  });

  it('sends tests through ntfy (a token kept when the config leaves it out), Telegram and Web Push', async () => {
    const api = t.as((await createUser(t.app)).token);
    const ntfyChannel = (
      await api
        .post('/v1/notification-channels', {
          type: 'ntfy',
          name: 'ntfy',
          config: { server: ntfy.url, topic: 'alerts', token: 'tk_secret123', priority: 4 },
        })
        .expect(201)
    ).body.data;
    expect(ntfyChannel.config).toEqual({ server: ntfy.url, topic: 'alerts', priority: 4 });
    await api
      .patch(`/v1/notification-channels/${ntfyChannel.id}`, { config: { server: ntfy.url, topic: 'other' } })
      .expect(200);
    expect((await api.post(`/v1/notification-channels/${ntfyChannel.id}/test`).expect(200)).body.data.ok).toBe(true);
    expect(ntfy.messages.at(-1)).toMatchObject({ topic: 'other', title: 'Waygate test notification' });

    const telegramChannel = (
      await api.post('/v1/notification-channels', { type: 'telegram', name: 'Chat', config: { chat_id: '4242' } })
    ).body;
    const telegramId = (telegramChannel as { data: { id: string } }).data.id;
    const sent = (await api.post(`/v1/notification-channels/${telegramId}/test`).expect(200)).body.data;
    expect(sent).toEqual({ ok: true, status: 200, detail: 'message 1', retryable: false });
    expect(telegram.messages.at(-1)!.text).toContain('Waygate test notification');

    const key = (await api.get('/v1/notification-channels/web-push-key').expect(200)).body.data.public_key;
    expect(key).toMatch(/^[A-Za-z0-9_-]{87}$/);
    const subscription = push.subscribe(key);
    const pushChannel = (
      await api
        .post('/v1/notification-channels', { type: 'web_push', name: 'Browser', config: { ...subscription } })
        .expect(201)
    ).body.data;
    expect(pushChannel.config).toEqual({ endpoint: subscription.endpoint });
    expect(JSON.stringify(pushChannel)).not.toContain(subscription.keys.auth);
    expect((await api.post(`/v1/notification-channels/${pushChannel.id}/test`).expect(200)).body.data.ok).toBe(true);
    expect(JSON.parse(push.received.at(-1)!.plaintext)).toMatchObject({ title: 'Waygate test notification' });
  });

  it('answers why when the secrets cannot be opened (sealed with another key), and takes them again', async () => {
    const api = t.as((await createUser(t.app)).token);
    const id = (
      await api
        .post('/v1/notification-channels', {
          type: 'gotify',
          name: 'Gotify',
          config: { server: gotify.url, token: 'AppToken.1' },
        })
        .expect(201)
    ).body.data.id;
    await t.database.db
      .updateTable('notification_channels')
      .set({ secrets_sealed: 'v1.sealed.with.another-key' })
      .where('id', '=', id)
      .execute();
    expect((await api.post(`/v1/notification-channels/${id}/test`).expect(200)).body.data).toEqual({
      ok: false,
      status: null,
      detail: "the channel's secrets cannot be opened with this SECRET_KEY: save its configuration again",
      retryable: false,
    });
    await api.patch(`/v1/notification-channels/${id}`, { config: { server: 'https://g.example' } }).expect(400);
    await api
      .patch(`/v1/notification-channels/${id}`, { config: { server: gotify.url, token: 'AppToken.1' } })
      .expect(200);
    expect((await api.post(`/v1/notification-channels/${id}/test`).expect(200)).body.data.ok).toBe(true);
  });

  it('says so when an ntfy channel names no server and the instance has none (NOTIFY_NTFY_SERVER)', async () => {
    const api = t.as((await createUser(t.app)).token);
    const id = (
      await api.post('/v1/notification-channels', { type: 'ntfy', name: 'ntfy', config: { topic: 'x' } }).expect(201)
    ).body.data.id;
    expect((await api.post(`/v1/notification-channels/${id}/test`).expect(200)).body.data).toEqual({
      ok: false,
      status: null,
      detail: 'no ntfy server: the channel names none and the instance has no default',
      retryable: false,
    });
  });

  it("refuses another user's channel as not found", async () => {
    const owner = t.as((await createUser(t.app)).token);
    const other = t.as((await createUser(t.app)).token);
    const id = (await owner.post('/v1/notification-channels', { type: 'email', name: 'Mail', config: {} }).expect(201))
      .body.data.id;
    const notFound = {
      error: 'NotFound',
      message: 'Notification channel not found',
      code: 'notification.channel_not_found',
    };
    expect((await other.patch(`/v1/notification-channels/${id}`, { name: 'x' }).expect(404)).body).toEqual(notFound);
    expect((await other.post(`/v1/notification-channels/${id}/test`).expect(404)).body).toEqual(notFound);
    expect((await other.delete(`/v1/notification-channels/${id}`).expect(404)).body).toEqual(notFound);
    expect((await other.get('/v1/notification-channels').expect(200)).body.data).toEqual([]);
    await owner.delete(`/v1/notification-channels/${id}`).expect(204);
    await owner.delete(`/v1/notification-channels/${UNKNOWN_ID}`).expect(404);
  });

  it.each([
    [{ type: 'ntfy', name: 'n', config: { topic: 'bad topic!' } }, "Body field 'config.topic' must match pattern"],
    [{ type: 'webhook', name: 'w', config: {} }, "Body field 'config.url' is required"],
    [{ type: 'webhook', name: 'w', config: { url: 'ftp://x.example' } }, "Body field 'config.url' must match pattern"],
    [{ type: 'gotify', name: 'g', config: { server: 'https://g.example' } }, "Body field 'config.token' is required"],
    [{ type: 'sms', name: 's', config: {} }, "Body field 'type'"],
  ])('refuses %j with 400 naming the field', async (body, message) => {
    const api = t.as((await createUser(t.app)).token);
    const answer = (await api.post('/v1/notification-channels', unchecked(body)).expect(400)).body;
    expect(answer).toMatchObject({ error: 'BadRequest', code: 'request.validation' });
    expect(answer.message).toContain(message);
  });
});

describe('notification channels to private addresses', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(() => t.close());

  it('refuses a webhook on loopback unless NOTIFY_ALLOW_PRIVATE_TARGETS is set', async () => {
    const api = t.as((await createUser(t.app)).token);
    const id = (
      await api
        .post('/v1/notification-channels', { type: 'webhook', name: 'Local', config: { url: 'http://127.0.0.1:1/x' } })
        .expect(201)
    ).body.data.id;
    const answer = (await api.post(`/v1/notification-channels/${id}/test`).expect(200)).body.data;
    expect(answer).toEqual({
      ok: false,
      status: null,
      detail:
        'the host 127.0.0.1 resolves to a loopback, private or link-local address (NOTIFY_ALLOW_PRIVATE_TARGETS allows it)',
      retryable: false,
    });
  });
});
