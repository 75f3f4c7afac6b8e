import { cut, isReply, post, resultOf } from './http.js';
import type { Sender } from './types.js';

export interface GotifyConfig {
  /** The Gotify server's base URL (a path prefix is kept). */
  server: string;
  /** An application token (Gotify: Apps, Create Application). */
  token: string;
  /** 0 to 10; the application's default when absent. */
  priority?: number;
}

/**
 * POST {server}/message with the app token in `X-Gotify-Key` and `{ title, message, priority, extras }`; the event's
 * page is the click target (`client::notification.click.url`), the text shown as plain text.
 */
export const sendGotify: Sender<GotifyConfig> = async (config, notification, options) => {
  const body = JSON.stringify({
    title: notification.title,
    message: cut(notification.body, 10_000),
    ...(config.priority !== undefined ? { priority: config.priority } : {}),
    extras: {
      'client::display': { contentType: 'text/plain' },
      ...(notification.url ? { 'client::notification': { click: { url: notification.url } } } : {}),
    },
  });
  const reply = await post(
    {
      url: `${config.server.replace(/\/+$/, '')}/message`,
      headers: { 'content-type': 'application/json', 'x-gotify-key': config.token },
      body,
    },
    options,
  );
  if (!isReply(reply)) return reply;
  // Gotify answers the message (with its id), or `{"error":"Unauthorized","errorCode":401,"errorDescription":"…"}`.
  let answer: { id?: unknown; error?: unknown; errorDescription?: unknown } | undefined;
  try {
    answer = JSON.parse(reply.text) as typeof answer;
  } catch {
    answer = undefined;
  }
  const detail =
    reply.status < 300
      ? answer?.id !== undefined
        ? `message ${String(answer.id)}`
        : 'sent'
      : answer?.error
        ? `${String(answer.error)}${answer.errorDescription ? `: ${String(answer.errorDescription)}` : ''}`
        : reply.text;
  return resultOf(reply, options.clock, detail);
};
