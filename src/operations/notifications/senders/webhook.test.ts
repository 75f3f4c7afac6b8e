import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestClock, type TestClock } from '../../../../test/clock.js';
import { startFakeWebhookReceiver, type FakeWebhookReceiver } from '../../../../test/fakes/webhook-receiver.js';
import { sampleNotification } from '../../../../test/notifications.js';
import { DETAIL_LIMIT, newWebhookSecret, sendWebhook, webhookBody } from '../index.js';

describe('webhook sender', () => {
  const secret = newWebhookSecret();
  let receiver: FakeWebhookReceiver;
  let clock: TestClock;
  beforeAll(async () => {
    receiver = await startFakeWebhookReceiver(secret);
  });
  afterAll(() => receiver.close());
  beforeEach(() => {
    clock = createTestClock();
    receiver.stalling = false;
  });

  it('makes secrets of 32 random bytes in the whsec_ form', () => {
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(newWebhookSecret()).not.toBe(secret);
  });

  it('POSTs JSON signed as Standard Webhooks says, verified by the reference verifier', async () => {
    const notification = sampleNotification();
    const result = await sendWebhook({ url: `${receiver.url}/hooks/waygate`, secret }, notification, { clock });
    expect(result).toEqual({ ok: true, status: 204, detail: 'HTTP 204', retryable: false });
    const delivery = receiver.received.find((r) => r.id === notification.id)!;
    expect(delivery.timestamp).toBe(Math.floor(clock.nowMs() / 1000));
    expect(delivery.headers['content-type']).toBe('application/json');
    expect(delivery.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(delivery.payload).toEqual({
      id: notification.id,
      type: 'geofence_enter',
      timestamp: '2026-11-29T14:02:00.000Z',
      title: 'Van 3 entered Depot',
      body: 'Van 3 entered the geofence Depot (Hamburg).',
      url: 'https://waygate.example/events/3f1c',
      data: { device_id: 'd-3', geofence_id: 'g-1', latitude: 53.5438, longitude: 9.9661 },
    });
    expect(JSON.parse(webhookBody(notification))).toEqual(delivery.payload);
  });

  it('is refused by the receiver when signed with another secret: a final failure', async () => {
    const before = receiver.rejected.length;
    const result = await sendWebhook({ url: receiver.url, secret: newWebhookSecret() }, sampleNotification(), {
      clock,
    });
    expect(result).toEqual({ ok: false, status: 400, detail: 'No matching signature found', retryable: false });
    expect(receiver.rejected.slice(before).map((r) => r.reason)).toEqual(['No matching signature found']);
  });

  it('signs with the clock: a timestamp ten minutes off is refused by the verifier', async () => {
    clock.advance(10 * 60_000);
    const result = await sendWebhook({ url: receiver.url, secret }, sampleNotification(), { clock });
    expect(result).toEqual({ ok: false, status: 400, detail: 'Message timestamp too new', retryable: false });
  });

  it('does not send with a secret that is not one', async () => {
    const count = receiver.requestCount;
    const result = await sendWebhook({ url: receiver.url, secret: 'whsec_%%%' }, sampleNotification(), { clock });
    expect(result).toEqual({
      ok: false,
      status: null,
      detail: 'the signing secret is not a valid whsec_ secret',
      retryable: false,
    });
    expect(receiver.requestCount).toBe(count);
  });

  it('reports a failing receiver with its status and a bounded detail, worth a retry', async () => {
    receiver.failNext(1, { status: 503, body: `overloaded ${'x'.repeat(20_000)}` });
    const result = await sendWebhook({ url: receiver.url, secret }, sampleNotification(), { clock });
    expect(result.ok).toBe(false);
    expect(result.status).toBe(503);
    expect(result.retryable).toBe(true);
    expect(result.detail.startsWith('overloaded xxx')).toBe(true);
    expect(result.detail).toHaveLength(DETAIL_LIMIT);
    expect(result.detail.endsWith('…')).toBe(true);
  });

  it('reads Retry-After of a 429 as the wait', async () => {
    receiver.failNext(1, { status: 429, body: 'slow down', headers: { 'retry-after': '30' } });
    const result = await sendWebhook({ url: receiver.url, secret }, sampleNotification(), { clock });
    expect(result).toEqual({ ok: false, status: 429, detail: 'slow down', retryable: true, retryAfterMs: 30_000 });
  });

  it('a 410 says the receiver wants no more: gone, final', async () => {
    receiver.failNext(1, { status: 410, body: 'endpoint disabled' });
    const result = await sendWebhook({ url: receiver.url, secret }, sampleNotification(), { clock });
    expect(result).toEqual({ ok: false, status: 410, detail: 'endpoint disabled', retryable: false, gone: true });
  });

  it('gives up on a receiver that does not answer in time: a retryable failure', async () => {
    receiver.stalling = true;
    const result = await sendWebhook({ url: receiver.url, secret }, sampleNotification(), { clock, timeoutMs: 200 });
    expect(result).toEqual({ ok: false, status: null, detail: 'no answer within 200 ms', retryable: true });
  });

  it('reports a refused connection as a retryable network error', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const result = await sendWebhook({ url: `http://127.0.0.1:${port}/`, secret }, sampleNotification(), { clock });
    expect(result).toMatchObject({ ok: false, status: null, retryable: true });
    expect(result.detail).toMatch(/^network error: ECONNREFUSED/);
  });

  it('follows a 307 within the same origin, and no redirect to another host', async () => {
    const notification = sampleNotification();
    receiver.failNext(1, { status: 307, body: '', headers: { location: '/moved' } });
    const followed = await sendWebhook({ url: `${receiver.url}/hooks`, secret }, notification, { clock });
    expect(followed).toEqual({ ok: true, status: 204, detail: 'HTTP 204', retryable: false });
    expect(receiver.received.filter((r) => r.id === notification.id)).toHaveLength(1);

    receiver.failNext(1, { status: 308, body: '', headers: { location: 'http://127.0.0.2:9/steal' } });
    const refused = await sendWebhook({ url: receiver.url, secret }, sampleNotification(), { clock });
    expect(refused).toEqual({
      ok: false,
      status: 308,
      detail: 'redirected to http://127.0.0.2:9/steal; not followed (only 307/308 within one origin)',
      retryable: false,
    });
  });

  it('does not send to an address that is not http(s)', async () => {
    const result = await sendWebhook({ url: 'file:///etc/passwd', secret }, sampleNotification(), { clock });
    expect(result).toEqual({ ok: false, status: null, detail: 'the address is not http(s)', retryable: false });
  });
});
