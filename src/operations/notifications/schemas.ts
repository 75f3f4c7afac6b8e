import { Type, type Static } from 'typebox';
import { EVENT_TYPES } from '../../tracking/events/schemas.js';
import { Body, DateTime, named, Nullable, Uuid } from '../../platform/http/schemas.js';

/**
 * The configuration each channel type takes, for the channel routes to validate (and the OpenAPI document to show).
 * Secrets (the webhook's signing secret, the VAPID keys) are made by the service, never sent in.
 */

export const ChannelTypes = ['email', 'webhook', 'ntfy', 'gotify', 'telegram', 'web_push'] as const;
export type ChannelType = (typeof ChannelTypes)[number];
export const ChannelType = Type.Unsafe<ChannelType>(Type.Union(ChannelTypes.map((type) => Type.Literal(type))));

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

// ---- The routes' shapes (channels, rules, deliveries) ----

/** The event types a rule may name: every type the events module records (docs/events.md). */
const NotifiedEventTypes = EVENT_TYPES;

const ChannelName = Type.String({ minLength: 1, maxLength: 100 });
const ChannelConfigObject = Type.Unsafe<Record<string, unknown>>({
  type: 'object',
  additionalProperties: true,
  description:
    "The type's configuration (docs/notifications.md): checked against the type's schema, 400 naming the field",
});

export const NotificationChannel = named(
  'NotificationChannel',
  Type.Object({
    id: Uuid,
    type: ChannelType,
    name: Type.String(),
    enabled: Type.Boolean(),
    config: Type.Record(Type.String(), Type.Unknown(), {
      description: 'The configuration without its secrets (tokens, the signing secret, the push keys)',
    }),
    has_token: Type.Boolean({
      description: 'Whether the channel holds a secret: a webhook signing secret, a token, push subscription keys',
    }),
    last_status: Nullable(Type.Integer()),
    last_error: Nullable(Type.String()),
    last_success_at: Nullable(DateTime),
    last_failure_at: Nullable(DateTime),
    failing: Type.Boolean({ description: 'Deliveries keep failing (the owner was mailed); cleared by a success' }),
    created_at: DateTime,
    updated_at: DateTime,
  }),
);

/** The create answer: a webhook's signing secret, shown this once. */
export const CreatedNotificationChannel = Type.Intersect([
  NotificationChannel,
  Type.Object({
    secret: Type.Optional(Type.String({ description: "A webhook's signing secret (whsec_…), shown once" })),
  }),
]);

export const CreateChannelBody = Body(
  { type: ChannelType, name: ChannelName, config: ChannelConfigObject, enabled: Type.Optional(Type.Boolean()) },
  { example: { type: 'ntfy', name: 'Phone', config: { topic: 'my-waygate-alerts' } } },
);

export const UpdateChannelBody = Body(
  {
    name: Type.Optional(ChannelName),
    config: Type.Optional(ChannelConfigObject),
    enabled: Type.Optional(Type.Boolean()),
  },
  { atLeastOne: true, example: { enabled: false } },
);

export const SendResultSchema = named(
  'NotificationSendResult',
  Type.Object({
    ok: Type.Boolean(),
    status: Nullable(Type.Integer({ description: "The far side's HTTP status; null when none came" })),
    detail: Type.String({ description: 'What the far side said, or why nothing was sent' }),
    retryable: Type.Boolean(),
    retry_after_ms: Type.Optional(Type.Integer()),
    gone: Type.Optional(Type.Boolean()),
  }),
);

const ClockTime = Type.String({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', description: 'HH:MM' });
export const QuietHours = Type.Object(
  { from: ClockTime, to: ClockTime },
  { additionalProperties: false, description: "In the user's time zone; deliveries wait until they end" },
);
const IdList = (description: string) =>
  Type.Array(Uuid, { minItems: 1, maxItems: 100, uniqueItems: true, description });

export const NotificationRule = named(
  'NotificationRule',
  Type.Object({
    id: Uuid,
    name: Type.String(),
    event_types: Type.Array(Type.String()),
    device_ids: Nullable(Type.Array(Uuid)),
    geofence_ids: Nullable(Type.Array(Uuid)),
    channel_ids: Type.Array(Uuid),
    quiet_hours: Nullable(QuietHours),
    enabled: Type.Boolean(),
    created_at: DateTime,
    updated_at: DateTime,
  }),
);

const ruleFields = {
  name: ChannelName,
  event_types: Type.Array(Type.Unsafe<string>(Type.Union(NotifiedEventTypes.map((type) => Type.Literal(type)))), {
    minItems: 1,
    maxItems: NotifiedEventTypes.length,
    uniqueItems: true,
  }),
  device_ids: Nullable(IdList('Devices you may see; null: every device you may see')),
  geofence_ids: Nullable(IdList('Geofences you may see; null: any (and events without a geofence)')),
  channel_ids: IdList('Your channels'),
  quiet_hours: Nullable(QuietHours),
  enabled: Type.Boolean(),
};

export const CreateRuleBody = Body(
  {
    name: ruleFields.name,
    event_types: ruleFields.event_types,
    device_ids: Type.Optional(ruleFields.device_ids),
    geofence_ids: Type.Optional(ruleFields.geofence_ids),
    channel_ids: ruleFields.channel_ids,
    quiet_hours: Type.Optional(ruleFields.quiet_hours),
    enabled: Type.Optional(ruleFields.enabled),
  },
  {
    example: {
      name: 'Home',
      event_types: ['geofence_enter', 'geofence_exit'],
      channel_ids: ['3f2b8c1e-8d4a-4f6e-9b1a-2c3d4e5f6a7b'],
      quiet_hours: { from: '22:00', to: '07:00' },
    },
  },
);

export const UpdateRuleBody = Body(
  {
    name: Type.Optional(ruleFields.name),
    event_types: Type.Optional(ruleFields.event_types),
    device_ids: Type.Optional(ruleFields.device_ids),
    geofence_ids: Type.Optional(ruleFields.geofence_ids),
    channel_ids: Type.Optional(ruleFields.channel_ids),
    quiet_hours: Type.Optional(ruleFields.quiet_hours),
    enabled: Type.Optional(ruleFields.enabled),
  },
  { atLeastOne: true, example: { enabled: false } },
);

export const DeliveryStatuses = ['pending', 'sending', 'sent', 'failed', 'gone'] as const;

export const NotificationDelivery = named(
  'NotificationDelivery',
  Type.Object({
    id: Uuid,
    event_id: Uuid,
    event_type: Type.String(),
    channel_id: Uuid,
    rule_id: Nullable(Uuid),
    status: Type.Unsafe<(typeof DeliveryStatuses)[number]>(
      Type.Union(
        DeliveryStatuses.map((status) => Type.Literal(status)),
        {
          description:
            'pending (due at next_attempt_at), sending, sent, failed (given up) or gone (the far side ended it)',
        },
      ),
    ),
    attempts: Type.Integer(),
    next_attempt_at: DateTime,
    last_status: Nullable(Type.Integer()),
    last_error: Nullable(Type.String()),
    sent_at: Nullable(DateTime),
    created_at: DateTime,
    updated_at: DateTime,
  }),
);

export const DeliveriesQuery = Type.Object({
  page: Type.Integer({ minimum: 1, default: 1, description: 'Page number, from 1' }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 50, description: 'Items per page, at most 100' }),
  status: Type.Optional(
    Type.Unsafe<(typeof DeliveryStatuses)[number]>(Type.Union(DeliveryStatuses.map((status) => Type.Literal(status)))),
  ),
  channel_id: Type.Optional(Uuid),
  event_id: Type.Optional(Uuid),
});
