import { failed, isReply, post, resultOf } from './http.js';
import type { Notification, Sender } from './types.js';

/** A browser's push subscription, as `PushSubscription.toJSON()` gives it. */
export interface PushSubscriptionConfig {
  endpoint: string;
  keys: { p256dh: string; auth: string };
}

/** The instance's VAPID identity (RFC 8292): a P-256 key pair in base64url and a contact (`mailto:` or https URL). */
export interface VapidDetails {
  subject: string;
  publicKey: string;
  privateKey: string;
}

export interface WebPushOptions {
  vapid: VapidDetails;
  /** How long the push service keeps an undelivered message; default a day. */
  ttlSeconds?: number;
  urgency?: 'very-low' | 'low' | 'normal' | 'high';
}

/** A push message's plaintext must stay under 4 KB once encrypted (RFC 8291 section 4: 3993 octets). */
const PAYLOAD_LIMIT = 3000;
/** The VAPID token's lifetime: RFC 8292 allows at most 24 hours. */
const JWT_LIFETIME_S = 12 * 3600;

// web-push (and its ASN.1 and JWS dependencies) is loaded with the first push, not at start.
const load = () => import('web-push').then((module) => module.default);
let library: ReturnType<typeof load> | undefined;
const webPush = () => (library ??= load());

/** A new VAPID key pair (P-256, base64url): the public key is what the console's service worker subscribes with. */
export async function newVapidKeys(): Promise<{ publicKey: string; privateKey: string }> {
  return (await webPush()).generateVAPIDKeys();
}

/** What the service worker receives: JSON of the texts, the body shortened until it fits. */
export function pushPayload(notification: Notification): string {
  const payload = (body: string) =>
    JSON.stringify({
      id: notification.id,
      type: notification.type,
      title: notification.title,
      body,
      ...(notification.url ? { url: notification.url } : {}),
      at: notification.at.toISOString(),
    });
  let body = notification.body;
  while (Buffer.byteLength(payload(body)) > PAYLOAD_LIMIT && body.length > 0) body = body.slice(0, -100);
  return payload(body === notification.body ? body : `${body}…`);
}

/**
 * Encrypts the payload for the subscription (RFC 8291, `aes128gcm`) and POSTs it to the push service with a VAPID
 * token (`Authorization: vapid t=<JWT>, k=<public key>`, audience the endpoint's origin, expiry from the clock).
 * 404 or 410 from the push service: the subscription is gone, drop it.
 */
export const sendWebPush: Sender<PushSubscriptionConfig, WebPushOptions> = async (
  subscription,
  notification,
  options,
) => {
  let endpoint: URL;
  try {
    endpoint = new URL(subscription.endpoint);
  } catch {
    return failed('the subscription endpoint is not a URL');
  }
  const lib = await webPush();
  let body: Buffer;
  let authorization: string;
  try {
    body = lib.encrypt(
      subscription.keys.p256dh,
      subscription.keys.auth,
      pushPayload(notification),
      'aes128gcm',
    ).cipherText;
    const expiry = Math.floor(options.clock.nowMs() / 1000) + JWT_LIFETIME_S;
    const { vapid } = options;
    authorization = lib.getVapidHeaders(
      endpoint.origin,
      vapid.subject,
      vapid.publicKey,
      vapid.privateKey,
      'aes128gcm',
      expiry,
    ).Authorization;
  } catch (error) {
    return failed(`cannot encrypt or sign: ${error instanceof Error ? error.message : String(error)}`);
  }
  const reply = await post(
    {
      url: endpoint.href,
      headers: {
        authorization,
        'content-type': 'application/octet-stream',
        'content-encoding': 'aes128gcm',
        ttl: String(options.ttlSeconds ?? 86_400),
        urgency: options.urgency ?? 'normal',
      },
      body,
    },
    options,
  );
  if (!isReply(reply)) return reply;
  const result = resultOf(reply, options.clock, reply.status < 300 ? 'accepted' : reply.text);
  return reply.status === 404 || reply.status === 410 ? { ...result, gone: true } : result;
};
