import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestClock, type TestClock } from '../../../../test/clock.js';
import { startFakeNtfy, type FakeNtfy } from '../../../../test/fakes/ntfy.js';
import { sampleNotification } from '../../../../test/notifications.js';
import { sendNtfy } from '../index.js';

describe('ntfy sender', () => {
  let ntfy: FakeNtfy;
  let clock: TestClock;
  beforeAll(async () => {
    ntfy = await startFakeNtfy();
  });
  afterAll(() => ntfy.close());
  beforeEach(() => {
    clock = createTestClock();
    ntfy.token = undefined;
    ntfy.stalling = false;
  });

  it('publishes as JSON with title, priority, tags and the event as click target', async () => {
    const notification = sampleNotification({ title: 'Van 3 hat Depot „Süd“ betreten' });
    const result = await sendNtfy(
      { server: `${ntfy.url}/`, topic: 'waygate_alerts-1', priority: 4, tags: ['round_pushpin'] },
      notification,
      { clock },
    );
    expect(result).toEqual({ ok: true, status: 200, detail: `message msg${ntfy.messages.length}`, retryable: false });
    expect(ntfy.messages.at(-1)).toEqual({
      topic: 'waygate_alerts-1',
      title: 'Van 3 hat Depot „Süd“ betreten',
      message: 'Van 3 entered the geofence Depot (Hamburg).',
      priority: 4,
      tags: ['round_pushpin'],
      click: 'https://waygate.example/events/3f1c',
    });
  });

  it('sends the access token as a Bearer token to a protected topic', async () => {
    ntfy.token = 'tk_AgQdq7mVBoFD37zQVN29RhuMzNIz2';
    const result = await sendNtfy(
      { server: ntfy.url, topic: 'private', token: 'tk_AgQdq7mVBoFD37zQVN29RhuMzNIz2' },
      sampleNotification({ url: undefined }),
      { clock },
    );
    expect(result.ok).toBe(true);
    expect(ntfy.messages.at(-1)).toEqual({
      topic: 'private',
      title: 'Van 3 entered Depot',
      message: 'Van 3 entered the geofence Depot (Hamburg).',
      authorization: 'Bearer tk_AgQdq7mVBoFD37zQVN29RhuMzNIz2',
    });
  });

  it('a wrong or missing token is a final failure with what ntfy said', async () => {
    ntfy.token = 'tk_right';
    const wrong = await sendNtfy({ server: ntfy.url, topic: 'private', token: 'tk_wrong' }, sampleNotification(), {
      clock,
    });
    expect(wrong).toEqual({ ok: false, status: 401, detail: 'unauthorized', retryable: false });
    const missing = await sendNtfy({ server: ntfy.url, topic: 'private' }, sampleNotification(), { clock });
    expect(missing).toEqual({ ok: false, status: 403, detail: 'forbidden', retryable: false });
  });

  it('a failing server is worth a retry; a 429 with an HTTP date waits until then by the clock', async () => {
    ntfy.failNext(1);
    const broken = await sendNtfy({ server: ntfy.url, topic: 'alerts' }, sampleNotification(), { clock });
    expect(broken).toEqual({ ok: false, status: 500, detail: 'internal server error', retryable: true });

    clock.freeze();
    const until = new Date(Math.ceil((clock.nowMs() + 120_000) / 1000) * 1000);
    ntfy.failNext(1, {
      status: 429,
      body: '{"code":42901,"http":429,"error":"limit reached"}',
      headers: { 'retry-after': until.toUTCString() },
    });
    const limited = await sendNtfy({ server: ntfy.url, topic: 'alerts' }, sampleNotification(), { clock });
    expect(limited).toEqual({
      ok: false,
      status: 429,
      detail: 'limit reached',
      retryable: true,
      retryAfterMs: until.getTime() - clock.nowMs(),
    });
  });

  it('a server that does not answer in time is a retryable failure', async () => {
    ntfy.stalling = true;
    const result = await sendNtfy({ server: ntfy.url, topic: 'alerts' }, sampleNotification(), {
      clock,
      timeoutMs: 150,
    });
    expect(result).toEqual({ ok: false, status: null, detail: 'no answer within 150 ms', retryable: true });
  });
});
