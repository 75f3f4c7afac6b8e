import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestClock, type TestClock } from '../../../../test/clock.js';
import { startFakeGotify, type FakeGotify } from '../../../../test/fakes/gotify.js';
import { sampleNotification } from '../../../../test/notifications.js';
import { sendGotify } from '../index.js';

describe('Gotify sender', () => {
  const token = 'AqkBvJ7.Ne3Ys-q';
  let gotify: FakeGotify;
  let clock: TestClock;
  beforeAll(async () => {
    gotify = await startFakeGotify([token]);
  });
  afterAll(() => gotify.close());
  beforeEach(() => {
    clock = createTestClock();
    gotify.stalling = false;
  });

  it('POSTs /message with the app token, priority and the event as click target', async () => {
    const result = await sendGotify({ server: `${gotify.url}/`, token, priority: 8 }, sampleNotification(), { clock });
    expect(result).toEqual({ ok: true, status: 200, detail: `message ${gotify.messages.length}`, retryable: false });
    expect(gotify.messages.at(-1)).toEqual({
      token,
      title: 'Van 3 entered Depot',
      message: 'Van 3 entered the geofence Depot (Hamburg).',
      priority: 8,
      extras: {
        'client::display': { contentType: 'text/plain' },
        'client::notification': { click: { url: 'https://waygate.example/events/3f1c' } },
      },
    });
  });

  it('a bad app token is a final failure saying what Gotify said', async () => {
    const result = await sendGotify({ server: gotify.url, token: 'nope' }, sampleNotification(), { clock });
    expect(result).toEqual({
      ok: false,
      status: 401,
      detail: 'Unauthorized: you need to provide a valid access token or user credentials to access this api',
      retryable: false,
    });
  });

  it('a failing server is worth a retry, a silent one too', async () => {
    gotify.failNext(1);
    const broken = await sendGotify({ server: gotify.url, token }, sampleNotification(), { clock });
    expect(broken).toEqual({ ok: false, status: 500, detail: 'Internal Server Error: boom', retryable: true });

    gotify.stalling = true;
    const silent = await sendGotify({ server: gotify.url, token }, sampleNotification(), { clock, timeoutMs: 150 });
    expect(silent).toEqual({ ok: false, status: null, detail: 'no answer within 150 ms', retryable: true });
  });
});
