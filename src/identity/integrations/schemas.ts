import { Type, type Static } from 'typebox';
import { Body, DateTime, named, Nullable, Uuid } from '../../platform/http/schemas.js';

const Slug = Type.String({
  minLength: 1,
  maxLength: 40,
  pattern: '^[a-z0-9_-]+$',
  description: 'Platform slug, e.g. twitch',
});
export const SlugParams = Type.Object({ slug: Slug });
export const CallbackParams = Type.Object({ platform: Slug });

export const BotStatus = Type.Union([Type.Literal('active'), Type.Literal('paused'), Type.Literal('disabled')], {
  description: 'Whether the stream bot acts for this channel',
});

export const Integration = named(
  'Integration',
  Type.Object(
    {
      id: Uuid,
      user_id: Uuid,
      platform_slug: Type.String(),
      platform_name: Type.String(),
      platform_user_id: Type.String({ description: 'The account id at the platform' }),
      username: Type.String({ description: 'The login name at the platform' }),
      display_name: Type.String(),
      profile_image_url: Nullable(Type.String()),
      scopes: Type.Array(Type.String(), { description: 'Scopes the user granted' }),
      is_active: Type.Boolean({
        description: 'false once the platform stopped accepting the connection: connect again',
      }),
      bot_status: BotStatus,
      connected_at: DateTime,
      last_refreshed_at: Nullable(DateTime),
    },
    {
      examples: [
        {
          id: '3f1c2b4a-5d6e-4f70-8a9b-0c1d2e3f4a5b',
          user_id: '0b8e9f10-1a2b-4c3d-9e4f-5a6b7c8d9e0f',
          platform_slug: 'twitch',
          platform_name: 'Twitch',
          platform_user_id: '141981764',
          username: 'harbourlive',
          display_name: 'HarbourLive',
          profile_image_url: 'https://static-cdn.jtvnw.net/user-default-pictures/example.png',
          scopes: ['channel:read:subscriptions'],
          is_active: true,
          bot_status: 'active',
          connected_at: '2026-11-25T09:30:00.000Z',
          last_refreshed_at: null,
        },
      ],
    },
  ),
);
export const IntegrationList = Type.Array(Integration);

export const ConnectBody = Body(
  {
    redirect_uri: Type.String({
      minLength: 1,
      maxLength: 2000,
      description: 'Where the browser returns once the platform is done: absolute http(s), no fragment',
    }),
    scopes: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9:_.-]+$' }), {
        maxItems: 50,
        description: "Optional scopes to ask for besides the required ones (see the platform's scopes)",
      }),
    ),
  },
  { example: { redirect_uri: 'https://app.example.org/integrations/done', scopes: ['user:read:email'] } },
);
export type ConnectInput = Static<typeof ConnectBody>;

export const Connection = Type.Object({
  authorization_url: Type.String({ description: 'Send the browser here' }),
  state: Type.String({ description: 'Single use, valid 10 minutes; part of authorization_url already' }),
});

export const CallbackQuery = Type.Object({
  state: Type.String({ minLength: 1, maxLength: 8192 }),
  code: Type.Optional(Type.String({ maxLength: 2048 })),
  scope: Type.Optional(Type.String({ maxLength: 4096 })),
  error: Type.Optional(
    Type.String({ maxLength: 200, description: 'access_denied when the user did not allow the connection' }),
  ),
  error_description: Type.Optional(Type.String({ maxLength: 2048 })),
});
export type CallbackQuery = Static<typeof CallbackQuery>;

export const RefreshResult = Type.Object({
  success: Type.Boolean(),
  message: Type.String(),
  expires_at: Nullable(DateTime),
});

export const StatsResult = Type.Object({
  success: Type.Boolean(),
  stats: Type.Object({
    followers: Type.Integer(),
    subscribers: Nullable(
      Type.Integer({ description: 'null without the subscriptions scope, or for a channel without subscriptions' }),
    ),
    is_live: Type.Boolean(),
    current_viewers: Type.Integer(),
    stream_title: Nullable(Type.String()),
    game_name: Nullable(Type.String()),
    updated_at: DateTime,
  }),
});

export const BotStatusBody = Body({ bot_status: BotStatus }, { example: { bot_status: 'paused' } });
export const BotStatusResult = Type.Object({ success: Type.Boolean(), bot_status: BotStatus });

export const PlatformScopes = Type.Object({
  platform: Type.String(),
  scopes: Type.Array(Type.Object({ name: Type.String(), description: Type.String(), required: Type.Boolean() })),
});

export const PlatformList = Type.Object({
  platforms: Type.Array(
    Type.Object({
      slug: Type.String(),
      name: Type.String(),
      description: Type.String(),
      icon_url: Nullable(Type.String()),
      enabled: Type.Boolean({ description: 'false: not configured on this server; connecting is refused' }),
      features: Type.Array(Type.String()),
    }),
  ),
});
