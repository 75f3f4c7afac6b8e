import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestClock, type TestClock } from '../../../../test/clock.js';
import { startFakePushService, type FakePushService } from '../../../../test/fakes/push-service.js';
import { sampleNotification } from '../../../../test/notifications.js';
import { newVapidKeys, pushPayload, sendWebPush, type VapidDetails } from '../index.js';

describe('Web Push sender', () => {
  let push: FakePushService;
  let clock: TestClock;
  let vapid: VapidDetails;
  // The push service reads the same clock as the sender, moved by `serviceAheadMs` where a test needs it.
  let serviceAheadMs = 0;
  beforeAll(async () => {
    push = await startFakePushService(() => clock.nowMs() + serviceAheadMs);
    vapid = { subject: 'mailto:admin@waygate.example', ...(await newVapidKeys()) };
  });
  afterAll(() => push.close());
  beforeEach(() => {
    clock = createTestClock();
    serviceAheadMs = 0;
    push.stalling = false;
  });

  it('makes VAPID key pairs: P-256 in base64url', async () => {
    expect(vapid.publicKey).toMatch(/^[A-Za-z0-9_-]{87}$/);
    expect(vapid.privateKey).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('encrypts for the subscription (RFC 8291) with a VAPID token the push service accepts', async () => {
    const subscription = push.subscribe(vapid.publicKey);
    const notification = sampleNotification();
    const result = await sendWebPush(subscription, notification, { clock, vapid, urgency: 'high', ttlSeconds: 3600 });
    expect(result).toEqual({ ok: true, status: 201, detail: 'accepted', retryable: false });
    const delivered = push.received.find((r) => subscription.endpoint.endsWith(r.subscriptionId))!;
    expect(JSON.parse(delivered.plaintext)).toEqual({
      id: notification.id,
      type: 'geofence_enter',
      title: 'Van 3 entered Depot',
      body: 'Van 3 entered the geofence Depot (Hamburg).',
      url: 'https://waygate.example/events/3f1c',
      at: '2026-11-29T14:02:00.000Z',
    });
    expect(delivered.claims).toEqual({
      aud: push.url,
      exp: Math.floor(clock.nowMs() / 1000) + 12 * 3600,
      sub: 'mailto:admin@waygate.example',
    });
    expect(delivered.headers).toMatchObject({ ttl: '3600', urgency: 'high', 'content-encoding': 'aes128gcm' });
  });

  it('shortens a long body so the encrypted message stays within 4 KB', async () => {
    const subscription = push.subscribe();
    const notification = sampleNotification({ body: 'Ä'.repeat(10_000) });
    const result = await sendWebPush(subscription, notification, { clock, vapid });
    expect(result.ok).toBe(true);
    const delivered = push.received.find((r) => subscription.endpoint.endsWith(r.subscriptionId))!;
    expect(delivered.plaintext).toBe(pushPayload(notification));
    expect(Buffer.byteLength(delivered.plaintext)).toBeLessThanOrEqual(3000);
    expect((JSON.parse(delivered.plaintext) as { body: string }).body).toMatch(/^Ä+…$/);
  });

  it('a subscription that ended (410) or never existed (404) is gone, not retried', async () => {
    const subscription = push.subscribe();
    push.unsubscribe(subscription.endpoint);
    const ended = await sendWebPush(subscription, sampleNotification(), { clock, vapid });
    expect(ended).toEqual({
      ok: false,
      status: 410,
      detail: 'subscription expired or unsubscribed',
      retryable: false,
      gone: true,
    });
    const unknown = await sendWebPush(
      { ...subscription, endpoint: `${push.url}/push/00000000-0000-4000-8000-000000000000` },
      sampleNotification(),
      { clock, vapid },
    );
    expect(unknown).toEqual({ ok: false, status: 404, detail: 'no such subscription', retryable: false, gone: true });
  });

  it('a token signed with another VAPID key, or expired by the push service’s clock, is refused for good', async () => {
    const other = { subject: 'https://other.example', ...(await newVapidKeys()) };
    const subscription = push.subscribe(vapid.publicKey);
    const wrongKey = await sendWebPush(subscription, sampleNotification(), { clock, vapid: other });
    expect(wrongKey).toEqual({
      ok: false,
      status: 403,
      detail: 'VAPID key differs from the subscription’s',
      retryable: false,
    });
    serviceAheadMs = 13 * 3600_000;
    const expired = await sendWebPush(subscription, sampleNotification(), { clock, vapid });
    expect(expired).toEqual({ ok: false, status: 401, detail: 'JWT expired', retryable: false });
  });

  it('a failing or silent push service is worth a retry', async () => {
    const subscription = push.subscribe();
    push.failNext(1, { status: 502, body: 'bad gateway' });
    const broken = await sendWebPush(subscription, sampleNotification(), { clock, vapid });
    expect(broken).toEqual({ ok: false, status: 502, detail: 'bad gateway', retryable: true });
    push.stalling = true;
    const silent = await sendWebPush(subscription, sampleNotification(), { clock, vapid, timeoutMs: 150 });
    expect(silent).toEqual({ ok: false, status: null, detail: 'no answer within 150 ms', retryable: true });
  });

  it('does not send to a subscription whose keys are not keys', async () => {
    const count = push.requestCount;
    const subscription = { ...push.subscribe(), keys: { p256dh: 'AAAA', auth: 'AAAA' } };
    const result = await sendWebPush(subscription, sampleNotification(), { clock, vapid });
    expect(result).toMatchObject({ ok: false, status: null, retryable: false });
    expect(result.detail).toMatch(/^cannot encrypt or sign: /);
    expect(push.requestCount).toBe(count);
  });
});
