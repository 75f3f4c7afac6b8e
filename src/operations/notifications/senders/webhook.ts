import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { failed, isReply, post, resultOf } from './http.js';
import type { Sender } from './types.js';

export interface WebhookConfig {
  url: string;
  /** `whsec_` and the base64 of the signing key (Standard Webhooks). */
  secret: string;
}

/** A new signing secret: `whsec_` and 32 random bytes in base64, shown to the owner once. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** The JSON body a webhook receives: the Standard Webhooks envelope (`type`, `timestamp`, `data`) plus the texts. */
export function webhookBody(notification: Parameters<typeof sendWebhook>[1]): string {
  return JSON.stringify({
    id: notification.id,
    type: notification.type,
    timestamp: notification.at.toISOString(),
    title: notification.title,
    body: notification.body,
    ...(notification.url ? { url: notification.url } : {}),
    data: notification.data,
  });
}

/**
 * POSTs the notification as JSON, signed as the Standard Webhooks specification says: `webhook-id` (the delivery's
 * id, the same on every retry), `webhook-timestamp` (seconds, from the clock) and `webhook-signature`
 * (`v1,` and the base64 HMAC-SHA256 of `id.timestamp.body` with the secret's key), made by the reference library.
 * A 410 means the receiver wants no more (the specification's way to disable an endpoint): `gone`.
 */
export const sendWebhook: Sender<WebhookConfig> = async (config, notification, options) => {
  const body = webhookBody(notification);
  const sentAt = options.clock.now();
  let signature: string;
  try {
    signature = new Webhook(config.secret).sign(notification.id, sentAt, body);
  } catch {
    return failed('the signing secret is not a valid whsec_ secret');
  }
  const reply = await post(
    {
      url: config.url,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'Waygate-Webhooks/1',
        'webhook-id': notification.id,
        'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
        'webhook-signature': signature,
      },
      body,
    },
    options,
  );
  if (!isReply(reply)) return reply;
  const result = resultOf(reply, options.clock);
  return reply.status === 410 ? { ...result, gone: true } : result;
};
