import { clampRetryAfterMs, cut, failed, isReply, post, resultOf } from './http.js';
import type { Notification, Sender } from './types.js';

export interface TelegramConfig {
  /** The bot's token from @BotFather (`123456:ABC…`): the channel's own, or the instance's. */
  bot_token: string;
  /** A numeric chat id (negative for groups) or `@channelusername`. */
  chat_id: string;
}

export const TELEGRAM_API_URL = 'https://api.telegram.org';
/** Telegram's limit on a message's text, in characters. */
const TEXT_LIMIT = 4096;

/** The message: the title in bold, the body, the event's link; HTML parse mode with every text escaped. */
export function telegramText(notification: Notification): string {
  const link = notification.url ? `\n${escapeHtml(notification.url)}` : '';
  const head = `<b>${escapeHtml(cut(notification.title, 256))}</b>\n`;
  return `${head}${escapeHtml(cut(notification.body, TEXT_LIMIT - 600))}${link}`;
}

/**
 * Bot API `sendMessage` to {apiUrl}/bot<token>/sendMessage with `{ chat_id, text, parse_mode: 'HTML' }`. Telegram
 * answers `{ ok, result }` or `{ ok: false, error_code, description, parameters: { retry_after } }`: a 429's
 * retry_after is the wait; 401 (bad token), 400 (chat not found) and 403 (bot blocked) are final.
 */
export const sendTelegram: Sender<TelegramConfig, { apiUrl?: string }> = async (config, notification, options) => {
  if (!/^\d{1,20}:[A-Za-z0-9_-]{20,100}$/.test(config.bot_token)) return failed('the bot token is not a bot token');
  const reply = await post(
    {
      url: `${(options.apiUrl ?? TELEGRAM_API_URL).replace(/\/+$/, '')}/bot${config.bot_token}/sendMessage`,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ chat_id: config.chat_id, text: telegramText(notification), parse_mode: 'HTML' }),
    },
    options,
  );
  if (!isReply(reply)) return { ...reply, detail: reply.detail.replaceAll(config.bot_token, '<token>') };
  let answer: TelegramAnswer | undefined;
  try {
    answer = JSON.parse(reply.text) as TelegramAnswer;
  } catch {
    answer = undefined;
  }
  if (reply.status < 300 && answer?.ok !== false) {
    const id = answer?.result?.message_id;
    return resultOf(reply, options.clock, id !== undefined ? `message ${String(id)}` : 'sent');
  }
  const result = resultOf(reply, options.clock, answer?.description ?? reply.text);
  const wait = answer?.parameters?.retry_after;
  return typeof wait === 'number' && result.retryable
    ? { ...result, retryAfterMs: clampRetryAfterMs(wait * 1000) }
    : result;
};

interface TelegramAnswer {
  ok?: boolean;
  result?: { message_id?: unknown };
  description?: string;
  error_code?: number;
  parameters?: { retry_after?: unknown };
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'));
}
