import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestClock, type TestClock } from '../../../../test/clock.js';
import { startFakeTelegram, type FakeTelegram } from '../../../../test/fakes/telegram.js';
import { sampleNotification } from '../../../../test/notifications.js';
import { sendTelegram } from '../index.js';

describe('Telegram sender', () => {
  const botToken = '7312984450:AAHk3vJqT0y1Xb2c-ZsWq9rLmNo_PqRsTuV';
  let telegram: FakeTelegram;
  let clock: TestClock;
  let apiUrl: string;
  beforeAll(async () => {
    telegram = await startFakeTelegram(botToken, [48151623, -1001234567890, '@waygate_alerts']);
    apiUrl = telegram.url;
  });
  afterAll(() => telegram.close());
  beforeEach(() => {
    clock = createTestClock();
    telegram.stalling = false;
  });

  it('sends the title in bold, the body and the link, every text HTML-escaped', async () => {
    const result = await sendTelegram(
      { bot_token: botToken, chat_id: '-1001234567890' },
      sampleNotification({ title: 'Van <3> left "Depot & Yard"', body: 'At 14:02 <b>not bold</b>.' }),
      { clock, apiUrl },
    );
    expect(result).toEqual({ ok: true, status: 200, detail: `message ${telegram.messages.length}`, retryable: false });
    expect(telegram.messages.at(-1)).toEqual({
      chat_id: '-1001234567890',
      parse_mode: 'HTML',
      text: '<b>Van &lt;3&gt; left "Depot &amp; Yard"</b>\nAt 14:02 &lt;b&gt;not bold&lt;/b&gt;.\nhttps://waygate.example/events/3f1c',
    });
  });

  it('a bad bot token and an unknown chat are final failures with Telegram’s description', async () => {
    const badToken = await sendTelegram(
      { bot_token: '7312984450:AAHk3vJqT0y1Xb2c-ZsWq9rLmNo_WRONGxx', chat_id: '48151623' },
      sampleNotification(),
      { clock, apiUrl },
    );
    expect(badToken).toEqual({ ok: false, status: 401, detail: 'Unauthorized', retryable: false });
    const unknownChat = await sendTelegram({ bot_token: botToken, chat_id: '42' }, sampleNotification(), {
      clock,
      apiUrl,
    });
    expect(unknownChat).toEqual({ ok: false, status: 400, detail: 'Bad Request: chat not found', retryable: false });
  });

  it('does not call Telegram with something that is not a bot token', async () => {
    const count = telegram.requestCount;
    const result = await sendTelegram({ bot_token: '../getMe?x=', chat_id: '48151623' }, sampleNotification(), {
      clock,
      apiUrl,
    });
    expect(result).toEqual({ ok: false, status: null, detail: 'the bot token is not a bot token', retryable: false });
    expect(telegram.requestCount).toBe(count);
  });

  it('flood control (429) is retryable after parameters.retry_after; a 500 and silence are retryable', async () => {
    telegram.floodNext(1, 7);
    const flooded = await sendTelegram({ bot_token: botToken, chat_id: '@waygate_alerts' }, sampleNotification(), {
      clock,
      apiUrl,
    });
    expect(flooded).toEqual({
      ok: false,
      status: 429,
      detail: 'Too Many Requests: retry after 7',
      retryable: true,
      retryAfterMs: 7000,
    });

    telegram.failNext(1);
    const broken = await sendTelegram({ bot_token: botToken, chat_id: '48151623' }, sampleNotification(), {
      clock,
      apiUrl,
    });
    expect(broken).toEqual({ ok: false, status: 500, detail: 'Internal Server Error', retryable: true });

    telegram.stalling = true;
    const silent = await sendTelegram({ bot_token: botToken, chat_id: '48151623' }, sampleNotification(), {
      clock,
      apiUrl,
      timeoutMs: 150,
    });
    expect(silent).toEqual({ ok: false, status: null, detail: 'no answer within 150 ms', retryable: true });
  });
});
