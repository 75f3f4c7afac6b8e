import { Type, type Static } from 'typebox';
import { Body, DateTime, named, Nullable, Uuid } from '../../platform/http/schemas.js';

/** A platform id (Discord snowflake): digits, kept as a string end to end (they exceed 2^53). */
export const Snowflake = Type.String({ pattern: '^[0-9]{1,20}$', description: 'Platform id (snowflake), as a string' });
/** The columns are PostgreSQL integers: one larger value must not fail a whole sync. */
const INT4_MAX = 2_147_483_647;
const Text = (maxLength: number) => Type.String({ maxLength });
const OptionalText = (maxLength: number) => Type.Optional(Nullable(Text(maxLength)));
const Instant = Type.Optional(Nullable(Type.String({ format: 'date-time' })));

// ---- What the bot reports (WebSocket sync messages) ----

export const BotGuild = Type.Object({
  guild_id: Snowflake,
  name: Type.String({ minLength: 1, maxLength: 100 }),
  icon: OptionalText(100),
  owner_id: Type.Optional(Nullable(Snowflake)),
  member_count: Type.Optional(Type.Integer({ minimum: 0, maximum: INT4_MAX })),
  boost_count: Type.Optional(Type.Integer({ minimum: 0, maximum: INT4_MAX })),
  premium_tier: Type.Optional(Type.Integer({ minimum: 0, maximum: 3 })),
  bot_joined_at: Instant,
});

export const BotChannel = Type.Object({
  channel_id: Snowflake,
  guild_id: Snowflake,
  name: Type.String({ minLength: 1, maxLength: 100 }),
  type: Type.Integer({ minimum: 0, maximum: 255, description: 'The platform type code (0 Text, 2 Voice, …)' }),
  parent_id: Type.Optional(Nullable(Snowflake)),
  position: Type.Optional(Type.Integer({ minimum: -INT4_MAX, maximum: INT4_MAX })),
  topic: OptionalText(4096),
  nsfw: Type.Optional(Type.Boolean()),
});

export const BotRole = Type.Object({
  role_id: Snowflake,
  guild_id: Snowflake,
  name: Type.String({ maxLength: 100 }),
  color: Type.Optional(Type.Integer({ minimum: 0, maximum: INT4_MAX })),
  position: Type.Optional(Type.Integer({ minimum: -INT4_MAX, maximum: INT4_MAX })),
  permissions: Type.Optional(Type.String({ pattern: '^[0-9]{1,25}$' })),
  managed: Type.Optional(Type.Boolean()),
  mentionable: Type.Optional(Type.Boolean()),
  hoist: Type.Optional(Type.Boolean()),
});

export const BotMember = Type.Object({
  user_id: Snowflake,
  username: Type.String({ minLength: 1, maxLength: 100 }),
  discriminator: OptionalText(4),
  global_name: OptionalText(100),
  nickname: OptionalText(100),
  avatar: OptionalText(100),
  bot: Type.Optional(Type.Boolean()),
  system: Type.Optional(Type.Boolean()),
  joined_at: Instant,
  premium_since: Instant,
  deaf: Type.Optional(Type.Boolean()),
  mute: Type.Optional(Type.Boolean()),
  pending: Type.Optional(Type.Boolean()),
  communication_disabled_until: Instant,
  roles: Type.Optional(Type.Array(Snowflake, { maxItems: 250 })),
});

export type BotGuild = Static<typeof BotGuild>;
export type BotChannel = Static<typeof BotChannel>;
export type BotRole = Static<typeof BotRole>;
export type BotMember = Static<typeof BotMember>;

// ---- REST shapes ----

export const Guild = named(
  'Guild',
  Type.Object({
    id: Uuid,
    guild_id: Type.String(),
    name: Type.String(),
    icon: Nullable(Type.String()),
    icon_url: Nullable(Type.String()),
    owner_id: Nullable(Type.String()),
    member_count: Type.Integer(),
    boost_count: Type.Integer(),
    premium_tier: Type.Integer({ minimum: 0, maximum: 3 }),
    bot_joined_at: Nullable(DateTime),
    last_synced_at: Nullable(DateTime),
  }),
);

export const Channel = named(
  'Channel',
  Type.Object({
    id: Uuid,
    channel_id: Type.String(),
    guild_id: Type.String({ description: 'The guild snowflake' }),
    name: Type.String(),
    channel_type: Type.String({
      description:
        'Text, Voice, Category, Announcement, Announcement Thread, Public Thread, Private Thread, Stage, Forum, Media (Unknown for other codes)',
    }),
    channel_type_raw: Type.Integer(),
    parent_id: Nullable(Type.String()),
    position: Type.Integer(),
    topic: Nullable(Type.String()),
    nsfw: Type.Boolean(),
    is_text_based: Type.Boolean(),
    is_voice: Type.Boolean(),
  }),
);

export const Member = named(
  'Member',
  Type.Object({
    id: Uuid,
    guild_id: Uuid,
    user_id: Type.String(),
    username: Type.String(),
    discriminator: Nullable(Type.String()),
    global_name: Nullable(Type.String()),
    nickname: Nullable(Type.String()),
    avatar: Nullable(Type.String()),
    avatar_url: Nullable(Type.String()),
    bot: Type.Boolean(),
    system: Type.Boolean(),
    joined_at: Nullable(DateTime),
    premium_since: Nullable(DateTime),
    deaf: Type.Boolean(),
    mute: Type.Boolean(),
    pending: Type.Boolean(),
    communication_disabled_until: Nullable(DateTime),
    roles: Type.Array(Type.String()),
    display_name: Type.String({ description: 'nickname, else global_name, else username' }),
    formatted_username: Type.String({ description: 'username, or username#discriminator for legacy accounts' }),
    is_timed_out: Type.Boolean(),
  }),
);

export const BotSettings = named(
  'BotSettings',
  Type.Object({
    id: Uuid,
    auto_sync_enabled: Type.Boolean(),
    sync_interval_seconds: Type.Integer(),
    initial_delay_seconds: Type.Integer(),
    default_language: Type.String(),
    notify_on_guild_join: Type.Boolean(),
    notify_on_guild_leave: Type.Boolean(),
    command_cooldown_seconds: Type.Integer(),
    updated_at: DateTime,
  }),
);

export const UpdateBotSettingsBody = Body(
  {
    auto_sync_enabled: Type.Optional(Type.Boolean()),
    sync_interval_seconds: Type.Optional(Type.Integer({ minimum: 60, maximum: 604_800 })),
    initial_delay_seconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 86_400 })),
    default_language: Type.Optional(
      Type.String({ minLength: 2, maxLength: 35, pattern: '^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$' }),
    ),
    notify_on_guild_join: Type.Optional(Type.Boolean()),
    notify_on_guild_leave: Type.Optional(Type.Boolean()),
    command_cooldown_seconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 3600 })),
  },
  { example: { auto_sync_enabled: true, sync_interval_seconds: 3600, default_language: 'en' } },
);

export const GuildSettings = named(
  'GuildSettings',
  Type.Object({ guild_id: Type.String(), default_language: Nullable(Type.String()) }),
);
export const UpdateGuildSettingsBody = Body(
  {
    default_language: Nullable(
      Type.String({
        minLength: 2,
        maxLength: 35,
        pattern: '^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$',
        description: 'null: the global default',
      }),
    ),
  },
  { example: { default_language: 'de' } },
);

export const SyncBody = Body({ guild_id: Type.Optional(Snowflake) }, { example: { guild_id: '80351110224678912' } });
export const GuildSyncResult = Type.Object({
  success: Type.Boolean(),
  error: Nullable(Type.String()),
  guilds_synced: Type.Integer(),
  channels_synced: Type.Integer(),
  roles_synced: Type.Integer(),
});
export const MemberSyncResult = Type.Object({
  success: Type.Boolean(),
  error: Nullable(Type.String()),
  members_synced: Type.Integer(),
});

const flag = Type.Boolean({ default: false });
export const MemberQuery = Type.Object({
  search: Type.Optional(
    Type.String({ minLength: 1, maxLength: 100, description: 'Part of the username, global name or nickname' }),
  ),
  bot_only: flag,
  humans_only: flag,
  has_role: Type.Optional(Snowflake),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
  offset: Type.Integer({ minimum: 0, default: 0 }),
});
export const MemberList = Type.Object({
  members: Type.Array(Member),
  total_count: Type.Integer(),
  has_more: Type.Boolean(),
});

export const SnowflakeGuildParams = Type.Object({ guild_id: Snowflake });
export const GuildIdParams = Type.Object({ guild_id: Uuid });
export const MemberParams = Type.Object({ guild_id: Uuid, user_id: Snowflake });
