import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildMailingTestApp, createUser, onEveryNode, type TestApp } from '../../../test/helpers.js';
import type { FakeSmtp } from '../../../test/fakes/smtp.js';
import { startFakeGotify, type FakeGotify } from '../../../test/fakes/gotify.js';
import { startFakeNtfy, type FakeNtfy } from '../../../test/fakes/ntfy.js';
import { startFakeTelegram, type FakeTelegram } from '../../../test/fakes/telegram.js';
import { startFakePushService, type FakePushService } from '../../../test/fakes/push-service.js';
import { startFakeWebhookReceiver, type FakeWebhookReceiver } from '../../../test/fakes/webhook-receiver.js';
import { recordTestEvent } from '../../../test/notification-events.js';

const BOT_TOKEN = '123456:ABCdefGHIjklMNOpqrSTUvwxYZ012345';

describe('the notification outbox', () => {
  let t: TestApp;
  let smtp: FakeSmtp;
  let ntfy: FakeNtfy;
  let gotify: FakeGotify;
  let telegram: FakeTelegram;
  let push: FakePushService;
  const receivers: FakeWebhookReceiver[] = [];
  beforeAll(async () => {
    [ntfy, gotify, telegram, push] = await Promise.all([
      startFakeNtfy(),
      startFakeGotify(['AppToken.1']),
      startFakeTelegram(BOT_TOKEN, [4242]),
      startFakePushService(),
    ]);
    ({ t, smtp } = await buildMailingTestApp({
      config: {
        notifications: {
          allowPrivateTargets: true,
          ntfyServer: undefined,
          telegramBotToken: BOT_TOKEN,
          telegramApiUrl: telegram.url,
        },
      },
    }));
  });
  afterAll(async () => {
    await t.close();
    await Promise.all([ntfy, gotify, telegram, push, ...receivers].map((fake) => fake.close()));
  });

  /** Every node sends what is due, at once (on two nodes: each delivery still goes once). */
  const sendDue = () => onEveryNode(t, (services) => services.notificationOutbox.sendDue().then(() => {}));

  async function newUser() {
    const user = await createUser(t.app);
    const api = t.as(user.token);
    const deviceId = (await api.post('/v1/devices', { name: 'Van 3' }).expect(201)).body.data.id;
    return { user, api, deviceId };
  }

  /** A webhook channel and a receiver that verifies with its secret. */
  async function webhookOf(api: ReturnType<TestApp['as']>) {
    const made = (
      await api
        .post('/v1/notification-channels', { type: 'webhook', name: 'Hook', config: { url: 'http://127.0.0.1:9/x' } })
        .expect(201)
    ).body.data;
    const receiver = await startFakeWebhookReceiver(made.secret!);
    receivers.push(receiver);
    await api.patch(`/v1/notification-channels/${made.id}`, { config: { url: `${receiver.url}/hook` } }).expect(200);
    return { channelId: made.id, receiver };
  }

  const ruleFor = (api: ReturnType<TestApp['as']>, channelIds: string[], extra: Record<string, unknown> = {}) =>
    api
      .post('/v1/notification-rules', {
        name: 'All',
        event_types: ['geofence_enter', 'sos', 'low_battery'],
        channel_ids: channelIds,
        ...extra,
      })
      .expect(201);

  it('delivers an event once to a webhook that verifies the signature, and lists the delivery', async () => {
    const { api, deviceId } = await newUser();
    const { channelId, receiver } = await webhookOf(api);
    await ruleFor(api, [channelId]);
    const event = await recordTestEvent(t, { type: 'sos', device_id: deviceId });
    expect(event.deliveries).toBe(1);
    await sendDue();
    await sendDue();
    expect(receiver.rejected).toEqual([]);
    expect(receiver.received).toHaveLength(1);
    expect(receiver.received[0]!.payload).toMatchObject({
      type: 'sos',
      title: 'SOS from Van 3',
      data: { event_id: event.id, device_id: deviceId, device_name: 'Van 3' },
    });
    const listed = (await api.get('/v1/notification-deliveries').expect(200)).body.data;
    expect(listed).toEqual([
      {
        id: receiver.received[0]!.id,
        event_id: event.id,
        event_type: 'sos',
        channel_id: channelId,
        rule_id: expect.any(String),
        status: 'sent',
        attempts: 1,
        next_attempt_at: expect.any(String),
        last_status: 204,
        last_error: null,
        sent_at: expect.any(String),
        created_at: expect.any(String),
        updated_at: expect.any(String),
      },
    ]);
    const channel = (await api.get(`/v1/notification-channels/${channelId}`).expect(200)).body.data;
    expect(channel).toMatchObject({ last_status: 204, failing: false, last_success_at: expect.any(String) });
  });

  it('retries a receiver that fails three times with backoff, and it gets the event once', async () => {
    const { api, deviceId } = await newUser();
    const { channelId, receiver } = await webhookOf(api);
    await ruleFor(api, [channelId]);
    receiver.failNext(3, { status: 503, body: 'busy' });
    const event = await recordTestEvent(t, { type: 'geofence_enter', device_id: deviceId });
    // The receiver checks the signature's timestamp against the wall clock (5 minutes either way): time goes back after.
    let moved = 0;
    const advance = (ms: number) => {
      moved += ms;
      t.clock.advance(ms);
    };
    try {
      const delivery = async () =>
        (await api.get('/v1/notification-deliveries', { query: { event_id: event.id } }).expect(200)).body.data[0]!;
      await sendDue();
      expect(await delivery()).toMatchObject({ status: 'pending', attempts: 1, last_status: 503, last_error: 'busy' });
      // Not due again before the first wait (30 s, a fifth less at the least) is over.
      advance(20_000);
      await sendDue();
      expect(receiver.requestCount).toBe(1);
      for (const [wait, attempts] of [
        [20_000, 2],
        [75_000, 3],
      ] as const) {
        advance(wait);
        await sendDue();
        expect(await delivery()).toMatchObject({ status: 'pending', attempts, last_status: 503 });
      }
      advance(150_000);
      await sendDue();
      expect(await delivery()).toMatchObject({ status: 'sent', attempts: 4, last_status: 204 });
      expect(receiver.received.map((received) => received.id)).toEqual([(await delivery()).id]);
      expect(receiver.requestCount).toBe(4);
    } finally {
      t.clock.advance(-moved);
    }
  });

  it('sends one notification each through ntfy, Gotify, Telegram and Web Push for one event', async () => {
    const { api, deviceId } = await newUser();
    const key = (await api.get('/v1/notification-channels/web-push-key').expect(200)).body.data.public_key;
    const subscription = push.subscribe(key);
    const configs = [
      { type: 'ntfy', name: 'ntfy', config: { server: ntfy.url, topic: `topic_${deviceId.slice(0, 8)}` } },
      { type: 'gotify', name: 'Gotify', config: { server: gotify.url, token: 'AppToken.1' } },
      { type: 'telegram', name: 'Telegram', config: { chat_id: '4242' } },
      { type: 'web_push', name: 'Browser', config: { ...subscription } },
    ] as const;
    const ids: string[] = [];
    for (const body of configs) ids.push((await api.post('/v1/notification-channels', body).expect(201)).body.data.id);
    await ruleFor(api, ids);
    const before = { ntfy: ntfy.messages.length, gotify: gotify.messages.length, telegram: telegram.messages.length };
    const pushes = push.received.length;
    const event = await recordTestEvent(t, { type: 'low_battery', device_id: deviceId });
    expect(event.deliveries).toBe(4);
    await sendDue();
    await sendDue();
    expect(ntfy.messages.length - before.ntfy).toBe(1);
    expect(ntfy.messages.at(-1)).toMatchObject({ title: "Van 3's battery is low" });
    expect(gotify.messages.length - before.gotify).toBe(1);
    expect(telegram.messages.length - before.telegram).toBe(1);
    expect(push.received.length - pushes).toBe(1);
    expect(JSON.parse(push.received.at(-1)!.plaintext)).toMatchObject({ title: "Van 3's battery is low" });
    const statuses = (await api.get('/v1/notification-deliveries').expect(200)).body.data.map((row) => row.status);
    expect(statuses).toEqual(['sent', 'sent', 'sent', 'sent']);
  });

  it('makes one delivery per channel whatever number of rules match, none for a historical or old event', async () => {
    const { api, deviceId } = await newUser();
    const { channelId } = await webhookOf(api);
    await ruleFor(api, [channelId]);
    await ruleFor(api, [channelId], { device_ids: [deviceId] });
    expect((await recordTestEvent(t, { type: 'sos', device_id: deviceId })).deliveries).toBe(1);
    expect(
      (await recordTestEvent(t, { type: 'sos', device_id: deviceId, details: { historical: true } })).deliveries,
    ).toBe(0);
    const old = new Date(t.clock.nowMs() - 25 * 3600_000);
    expect((await recordTestEvent(t, { type: 'sos', device_id: deviceId, occurred_at: old })).deliveries).toBe(0);
  });

  it("never delivers an event of a device the rule's owner cannot see", async () => {
    const { api } = await newUser();
    const { channelId } = await webhookOf(api);
    await ruleFor(api, [channelId]);
    const stranger = await newUser();
    expect((await recordTestEvent(t, { type: 'sos', device_id: stranger.deviceId })).deliveries).toBe(0);
  });

  it('holds a delivery in quiet hours until they end', async () => {
    const { api, deviceId } = await newUser();
    const topic = `quiet_${deviceId.slice(0, 8)}`;
    const channelId = (
      await api
        .post('/v1/notification-channels', { type: 'ntfy', name: 'ntfy', config: { server: ntfy.url, topic } })
        .expect(201)
    ).body.data.id;
    const received = () => ntfy.messages.filter((message) => message.topic === topic);
    const now = t.clock.now();
    const hhmm = (date: Date) => date.toISOString().slice(11, 16);
    const to = new Date(now.getTime() + 2 * 3600_000);
    await ruleFor(api, [channelId], {
      quiet_hours: { from: hhmm(new Date(now.getTime() - 3600_000)), to: hhmm(to) },
    });
    const event = await recordTestEvent(t, { type: 'sos', device_id: deviceId });
    await sendDue();
    expect(received()).toHaveLength(0);
    const held = (await api.get('/v1/notification-deliveries', { query: { event_id: event.id } }).expect(200)).body
      .data[0]!;
    expect(held).toMatchObject({ status: 'pending', attempts: 0 });
    const due = new Date(held.next_attempt_at).getTime();
    expect(Math.abs(due - new Date(`${to.toISOString().slice(0, 16)}:00.000Z`).getTime())).toBeLessThan(1000);
    t.clock.advance(2 * 3600_000 + 1000);
    try {
      await sendDue();
      expect(received()).toHaveLength(1);
    } finally {
      t.clock.advance(-(2 * 3600_000 + 1000));
    }
  });

  it('sends an event of 20 hours ago when quiet hours end 6 hours later, past the 24 hours', async () => {
    const { api, deviceId } = await newUser();
    // (ntfy, not a webhook: a webhook receiver refuses a signature time hours from its own clock.)
    const topic = `late_${deviceId.slice(0, 8)}`;
    const channelId = (
      await api
        .post('/v1/notification-channels', { type: 'ntfy', name: 'ntfy', config: { server: ntfy.url, topic } })
        .expect(201)
    ).body.data.id;
    const now = t.clock.now();
    const hhmm = (date: Date) => date.toISOString().slice(11, 16);
    await ruleFor(api, [channelId], {
      quiet_hours: { from: hhmm(new Date(now.getTime() - 3600_000)), to: hhmm(new Date(now.getTime() + 6 * 3600_000)) },
    });
    const occurred = new Date(now.getTime() - 20 * 3600_000);
    expect((await recordTestEvent(t, { type: 'sos', device_id: deviceId, occurred_at: occurred })).deliveries).toBe(1);
    t.clock.advance(6 * 3600_000 + 60_000);
    try {
      await sendDue();
      expect(ntfy.messages.filter((message) => message.topic === topic)).toHaveLength(1);
    } finally {
      t.clock.advance(-(6 * 3600_000 + 60_000));
    }
  });

  it('sends nothing held back once the device is no longer shared with the rule owner', async () => {
    const owner = await newUser();
    const friend = await newUser();
    const share = (
      await owner.api
        .post(`/v1/devices/${owner.deviceId}/shares`, { user_id: friend.user.id, level: 'live' })
        .expect(201)
    ).body.data;
    const { channelId, receiver } = await webhookOf(friend.api);
    const now = t.clock.now();
    const hhmm = (date: Date) => date.toISOString().slice(11, 16);
    await ruleFor(friend.api, [channelId], {
      quiet_hours: { from: hhmm(new Date(now.getTime() - 3600_000)), to: hhmm(new Date(now.getTime() + 3600_000)) },
    });
    const event = await recordTestEvent(t, { type: 'sos', device_id: owner.deviceId });
    expect(event.deliveries).toBe(1);
    await owner.api.delete(`/v1/devices/${owner.deviceId}/shares/${share.id}`).expect(204);
    t.clock.advance(3600_000 + 60_000);
    try {
      await sendDue();
      expect(receiver.received).toEqual([]);
      const delivery = (
        await friend.api.get('/v1/notification-deliveries', { query: { event_id: event.id } }).expect(200)
      ).body.data[0]!;
      expect(delivery).toMatchObject({ status: 'failed', last_error: "the channel's owner no longer sees the device" });
    } finally {
      t.clock.advance(-(3600_000 + 60_000));
    }
  });

  it('marks a channel that keeps failing and mails its owner once, until it works again', async () => {
    const { user, api, deviceId } = await newUser();
    const { channelId, receiver } = await webhookOf(api);
    await ruleFor(api, [channelId]);
    receiver.failNext(6, { status: 404, body: 'no such hook' });
    const address = `${user.username}@example.org`;
    for (let i = 0; i < 6; i++) {
      await recordTestEvent(t, { type: 'sos', device_id: deviceId });
      await sendDue();
    }
    const channel = (await api.get(`/v1/notification-channels/${channelId}`).expect(200)).body.data;
    expect(channel).toMatchObject({ failing: true, last_status: 404, last_error: 'no such hook' });
    const mail = await smtp.waitFor(address, (m) => m.subject.includes('keeps failing'));
    expect(mail.text).toContain('The last error: no such hook.');
    expect(smtp.received.filter((m) => m.to === address && m.subject.includes('keeps failing'))).toHaveLength(1);
    const failed = (await api.get('/v1/notification-deliveries', { query: { status: 'failed' } }).expect(200)).body;
    expect(failed.pagination.total).toBe(6);
    await recordTestEvent(t, { type: 'sos', device_id: deviceId });
    await sendDue();
    expect((await api.get(`/v1/notification-channels/${channelId}`).expect(200)).body.data).toMatchObject({
      failing: false,
    });
  });
  it('delivers a geofence entry that real points set off, once, in the transaction that stored them', async () => {
    const { api, deviceId } = await newUser();
    const { channelId, receiver } = await webhookOf(api);
    const geofenceId = (
      await api.post('/v1/geofences', { name: 'Depot', latitude: -33, longitude: 151, radius_km: 1 }).expect(201)
    ).body.data.id;
    await ruleFor(api, [channelId], { geofence_ids: [geofenceId] });
    const now = Math.floor(t.clock.nowMs() / 1000);
    const point = (latitude: number, secondsAgo: number) => ({
      device_id: deviceId,
      latitude,
      longitude: 151,
      timestamp: now - secondsAgo,
      speed_kmh: 0,
      speed_mps: 0,
      speed_mph: 0,
      speed_knots: 0,
    });
    const points = [point(-33.05, 120), point(-33, 60)];
    await api.post('/v1/gps/batch', points as never).expect(200);
    // The same batch again (a retrying tracker): stored and evaluated before, no second event or delivery.
    await api.post('/v1/gps/batch', points as never).expect(200);
    await sendDue();
    expect(receiver.rejected).toEqual([]);
    expect(receiver.received).toHaveLength(1);
    expect(receiver.received[0]!.payload).toMatchObject({
      type: 'geofence_enter',
      title: 'Van 3 entered Depot',
      data: { device_id: deviceId, geofence_id: geofenceId },
    });
  });
});
