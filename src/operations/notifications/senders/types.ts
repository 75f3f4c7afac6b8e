import type { Clock } from '../../../platform/clock.js';

/** What happened, in the words a person reads, ready for any channel. */
export interface Notification {
  /** The delivery's id: a receiver's key for spotting a repeat (the webhook's `webhook-id`). */
  id: string;
  /** The event type, e.g. `geofence_enter`. */
  type: string;
  title: string;
  body: string;
  /** Where a click leads (the console's page of the event). */
  url?: string;
  /** When the event happened. */
  at: Date;
  /** Machine-readable details for the webhook body (device, geofence, position). */
  data: Record<string, unknown>;
}

/**
 * What the far side said. Never thrown: a refused, failed or timed-out send is `ok: false` with the reason.
 * `retryable` says whether the same send may succeed later (network failure, timeout, 408, 429, 5xx); a final failure
 * (a bad token, an unknown chat, any other 4xx) will not succeed without a change of the channel.
 */
export interface SendResult {
  ok: boolean;
  /** The far side's HTTP status; null when no answer came (network error, timeout, bad configuration). */
  status: number | null;
  /** What the far side said (its error text, at most DETAIL_LIMIT characters), or why nothing was sent. */
  detail: string;
  retryable: boolean;
  /** How long the far side asked us to wait (Retry-After, Telegram's retry_after), capped at a day. */
  retryAfterMs?: number;
  /** The destination no longer exists (a push subscription answered 404/410, a webhook 410): stop sending to it. */
  gone?: boolean;
}

export interface SendOptions {
  clock: Clock;
  /** Defaults to the global fetch; tests and proxies may pass another. */
  fetch?: typeof fetch;
  /** Per request, including reading the answer; default 10 s, at most 60 s. */
  timeoutMs?: number;
}

export type Sender<Config, Extra = object> = (
  config: Config,
  notification: Notification,
  options: SendOptions & Extra,
) => Promise<SendResult>;
