/** Notification senders: one per channel type, each sends once and says what the far side answered. */
export type { Notification, SendOptions, SendResult } from './senders/types.js';
export { newWebhookSecret, sendWebhook, webhookBody, type WebhookConfig } from './senders/webhook.js';
export { sendNtfy, type NtfyConfig } from './senders/ntfy.js';
export { sendGotify, type GotifyConfig } from './senders/gotify.js';
export { sendTelegram, TELEGRAM_API_URL, telegramText, type TelegramConfig } from './senders/telegram.js';
export {
  newVapidKeys,
  pushPayload,
  sendWebPush,
  type PushSubscriptionConfig,
  type VapidDetails,
  type WebPushOptions,
} from './senders/web-push.js';
export { notificationMail, sendEmail } from './senders/email.js';
export { DETAIL_LIMIT, READ_LIMIT } from './senders/http.js';
