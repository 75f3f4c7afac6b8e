import { cut, isReply, post, resultOf } from './http.js';
import type { Sender } from './types.js';

export interface NtfyConfig {
  /** The ntfy server's base URL, e.g. https://ntfy.sh (a path prefix is kept). */
  server: string;
  topic: string;
  /** An access token (`tk_…`), sent as a Bearer token, for a protected topic. */
  token?: string;
  /** 1 (min) to 5 (max); the server's default (3) when absent. */
  priority?: number;
  /** Tags, some shown as emojis (`warning`, `rotating_light`). */
  tags?: string[];
}

/** ntfy's own limit on a message is 4096 bytes; a longer one becomes an attachment, which we do not want. */
const MESSAGE_LIMIT = 4000;

/**
 * Publishes as JSON to the server's root (ntfy's "publish as JSON"): `topic`, `title`, `message`, `priority`,
 * `tags` and `click` (the event's page). JSON rather than the `X-Title` headers, so titles need no header encoding.
 */
export const sendNtfy: Sender<NtfyConfig> = async (config, notification, options) => {
  const body = JSON.stringify({
    topic: config.topic,
    title: notification.title,
    message: cut(notification.body, MESSAGE_LIMIT),
    ...(config.priority ? { priority: config.priority } : {}),
    ...(config.tags?.length ? { tags: config.tags } : {}),
    ...(notification.url ? { click: notification.url } : {}),
  });
  const reply = await post(
    {
      url: `${config.server.replace(/\/+$/, '')}/`,
      headers: {
        'content-type': 'application/json',
        ...(config.token ? { authorization: `Bearer ${config.token}` } : {}),
      },
      body,
    },
    options,
  );
  if (!isReply(reply)) return reply;
  // ntfy answers the stored message (with its id) on success, `{"code":40301,"http":403,"error":"forbidden",…}` else.
  const answer = parse(reply.text);
  const detail =
    reply.status < 300 ? (answer?.id ? `message ${answer.id}` : 'published') : (answer?.error ?? reply.text);
  return resultOf(reply, options.clock, String(detail));
};

function parse(text: string): { id?: unknown; error?: unknown } | undefined {
  try {
    return JSON.parse(text) as { id?: unknown; error?: unknown };
  } catch {
    return undefined;
  }
}
