import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { ChannelConfigs, type ChannelType } from './schemas.js';

// Validated as the routes will: Ajv on the JSON body as sent.
const ajv = new Ajv({ strict: false });
const valid = (type: ChannelType, config: unknown) => ajv.validate(ChannelConfigs[type], config);

describe('channel configuration schemas', () => {
  it('take what each channel needs', () => {
    expect(valid('email', {})).toBe(true);
    expect(valid('webhook', { url: 'https://hooks.example.com/waygate?key=1' })).toBe(true);
    expect(valid('ntfy', { topic: 'waygate_Alerts-1' })).toBe(true);
    expect(
      valid('ntfy', { server: 'http://ntfy.lan:8080', topic: 'x', token: 'tk_abc', priority: 5, tags: ['warning'] }),
    ).toBe(true);
    expect(valid('gotify', { server: 'https://push.example.com', token: 'AqkBvJ7.Ne3Ys-q', priority: 0 })).toBe(true);
    expect(valid('telegram', { chat_id: '-1001234567890' })).toBe(true);
    expect(valid('telegram', { chat_id: '@waygate_alerts', bot_token: '123456:AAHk3vJqT0y1Xb2c-ZsWq9rLmNo' })).toBe(
      true,
    );
    expect(
      valid('web_push', {
        endpoint: 'https://fcm.googleapis.com/fcm/send/abc:def',
        keys: { p256dh: 'B'.repeat(87), auth: 'a'.repeat(22) },
      }),
    ).toBe(true);
  });

  it('refuse what no channel can use', () => {
    expect(valid('email', { to: 'someone@example.org' })).toBe(false);
    expect(valid('webhook', { url: 'ftp://files.example.com/' })).toBe(false);
    expect(valid('webhook', { url: 'https://user:pw@example.com/' })).toBe(false);
    expect(valid('webhook', { url: `https://example.com/${'a'.repeat(2000)}` })).toBe(false);
    expect(valid('webhook', { url: 'https://example.com', secret: 'whsec_x' })).toBe(false);
    expect(valid('ntfy', { topic: 'has space' })).toBe(false);
    expect(valid('ntfy', { topic: 'a'.repeat(65) })).toBe(false);
    expect(valid('ntfy', { topic: 'x', priority: 6 })).toBe(false);
    expect(valid('ntfy', { topic: 'x', tags: ['a', 'b', 'c', 'd', 'e', 'f'] })).toBe(false);
    expect(valid('gotify', { server: 'https://push.example.com' })).toBe(false);
    expect(valid('gotify', { server: 'https://push.example.com', token: 'a b' })).toBe(false);
    expect(valid('telegram', { chat_id: 'someone' })).toBe(false);
    expect(valid('telegram', { chat_id: '1', bot_token: 'not-a-token' })).toBe(false);
    expect(
      valid('web_push', { endpoint: 'https://push.example.com/x', keys: { p256dh: 'short', auth: 'a'.repeat(22) } }),
    ).toBe(false);
  });
});
