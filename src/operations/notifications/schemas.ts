import { Type, type Static } from 'typebox';

/**
 * The configuration each channel type takes, for the channel routes to validate (and the OpenAPI document to show).
 * Secrets (the webhook's signing secret, the VAPID keys) are made by the service, never sent in.
 */

export const ChannelTypes = ['email', 'webhook', 'ntfy', 'gotify', 'telegram', 'web_push'] as const;
export type ChannelType = (typeof ChannelTypes)[number];
export const ChannelType = Type.Union(ChannelTypes.map((type) => Type.Literal(type)));

/** An absolute http(s) URL with a host, no user name or password in it, at most 2,000 characters. */
export const HttpUrl = (description: string) =>
  Type.String({ pattern: '^https?://[^/?#@\\s]+(?:[/?#][^\\s]*)?$', minLength: 8, maxLength: 2000, description });

export const EmailChannelConfig = Type.Object(
  {},
  { additionalProperties: false, description: "Mail goes to the owner's confirmed address, in their language" },
);

export const WebhookChannelConfig = Type.Object(
  { url: HttpUrl('Where the signed JSON is POSTed') },
  { additionalProperties: false },
);

export const NtfyChannelConfig = Type.Object(
  {
    server: Type.Optional(HttpUrl("The ntfy server, e.g. https://ntfy.sh; the instance's default when absent")),
    // ntfy's own rule for a topic name (server/server.go, topicRegex).
    topic: Type.String({ pattern: '^[-_A-Za-z0-9]{1,64}$', description: 'Letters, digits, - and _, up to 64' }),
    token: Type.Optional(
      Type.String({ pattern: '^[\\x21-\\x7e]{1,200}$', description: 'An access token (tk_...) for a protected topic' }),
    ),
    priority: Type.Optional(Type.Integer({ minimum: 1, maximum: 5, description: '1 (min) to 5 (max); 3 is default' })),
    tags: Type.Optional(
      Type.Array(Type.String({ pattern: '^[^,\\s]{1,50}$' }), { maxItems: 5, description: 'Tags or emoji names' }),
    ),
  },
  { additionalProperties: false },
);

export const GotifyChannelConfig = Type.Object(
  {
    server: HttpUrl('The Gotify server'),
    token: Type.String({ pattern: '^[A-Za-z0-9._-]{1,200}$', description: "An application's token" }),
    priority: Type.Optional(Type.Integer({ minimum: 0, maximum: 10 })),
  },
  { additionalProperties: false },
);

export const TELEGRAM_BOT_TOKEN_PATTERN = '^\\d{1,20}:[A-Za-z0-9_-]{20,100}$';

export const TelegramChannelConfig = Type.Object(
  {
    chat_id: Type.String({
      pattern: '^(?:-?\\d{1,20}|@[A-Za-z][A-Za-z0-9_]{4,31})$',
      description: 'A numeric chat id (negative for groups) or @channelusername',
    }),
    bot_token: Type.Optional(
      Type.String({ pattern: TELEGRAM_BOT_TOKEN_PATTERN, description: "A bot's token; the instance's when absent" }),
    ),
  },
  { additionalProperties: false },
);

/** A browser's `PushSubscription.toJSON()`: the push service's endpoint and the keys to encrypt for. */
export const WebPushChannelConfig = Type.Object(
  {
    endpoint: HttpUrl("The push service's endpoint of the subscription"),
    keys: Type.Object(
      {
        p256dh: Type.String({ pattern: '^[A-Za-z0-9_-]{87}={0,1}$', description: 'P-256 public key, base64url' }),
        auth: Type.String({ pattern: '^[A-Za-z0-9_-]{22}={0,2}$', description: 'Authentication secret, base64url' }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

/** Each channel type's configuration schema, by type. */
export const ChannelConfigs = {
  email: EmailChannelConfig,
  webhook: WebhookChannelConfig,
  ntfy: NtfyChannelConfig,
  gotify: GotifyChannelConfig,
  telegram: TelegramChannelConfig,
  web_push: WebPushChannelConfig,
} satisfies Record<ChannelType, unknown>;

export type ChannelConfig<T extends ChannelType> = Static<(typeof ChannelConfigs)[T]>;
