import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Static } from 'typebox';
import type { AuditWriter } from '../../platform/audit.js';
import type { Caller } from '../../platform/auth/caller.js';
import type { Clock } from '../../platform/clock.js';
import type { Schema } from '../../platform/db/schema/index.js';
import type { KeyValueStore } from '../../platform/kv/index.js';
import type { BotLink } from '../realtime/service.js';
import { CommunityErrors } from './errors.js';
import { createCommunityRepo, type MemberFilter } from './repo.js';
import type { MemberQuery, UpdateBotSettingsBody } from './schemas.js';
import { createBotSync, type SyncOutcome } from './sync.js';

export { SYNC_TIMEOUT_MS } from './sync.js';

const CDN = 'https://cdn.discordapp.com';
const CHANNEL_TYPES: Record<number, string> = {
  0: 'Text',
  2: 'Voice',
  4: 'Category',
  5: 'Announcement',
  10: 'Announcement Thread',
  11: 'Public Thread',
  12: 'Private Thread',
  13: 'Stage',
  15: 'Forum',
  16: 'Media',
};
/** Channels one writes messages in (a forum or media channel holds threads, which are). */
const TEXT_BASED = new Set([0, 5, 10, 11, 12]);
const VOICE = new Set([2, 13]);
/** Staging rows older than this belong to a sync that can no longer finish. */
const STALE_STAGING_MS = 3600 * 1000;

interface Deps {
  db: Kysely<Schema>;
  kv: KeyValueStore;
  bot: BotLink;
  audit: AuditWriter;
  clock: Clock;
  log: FastifyBaseLogger;
}

type GuildRow = Awaited<ReturnType<ReturnType<typeof createCommunityRepo>['listGuilds']>>[number];
type ChannelRow = Awaited<ReturnType<ReturnType<typeof createCommunityRepo>['channelsOf']>>[number];
type MemberRow = NonNullable<Awaited<ReturnType<ReturnType<typeof createCommunityRepo>['member']>>>;

const guildView = (guild: GuildRow) => ({
  ...guild,
  icon_url: guild.icon ? `${CDN}/icons/${guild.guild_id}/${guild.icon}.png` : null,
});

const channelView = (guildSnowflake: string) => (channel: ChannelRow) => ({
  id: channel.id,
  channel_id: channel.channel_id,
  guild_id: guildSnowflake,
  name: channel.name,
  channel_type: CHANNEL_TYPES[channel.channel_type] ?? 'Unknown',
  channel_type_raw: channel.channel_type,
  parent_id: channel.parent_id,
  position: channel.position,
  topic: channel.topic,
  nsfw: channel.nsfw,
  is_text_based: TEXT_BASED.has(channel.channel_type),
  is_voice: VOICE.has(channel.channel_type),
});

/** Chat-community records reported by the community bot, its settings, and syncs on request. */
export function createCommunityService(deps: Deps) {
  const repo = createCommunityRepo(deps.db);
  const sync = createBotSync({ db: deps.db, kv: deps.kv, bot: deps.bot, repo, clock: deps.clock, log: deps.log });

  const memberView = (member: MemberRow) => ({
    ...member,
    avatar_url: member.avatar ? `${CDN}/avatars/${member.user_id}/${member.avatar}.png` : null,
    display_name: member.nickname ?? member.global_name ?? member.username,
    // Accounts that still have a discriminator (not "0") are shown the legacy way.
    formatted_username:
      member.discriminator && member.discriminator !== '0'
        ? `${member.username}#${member.discriminator}`
        : member.username,
    is_timed_out:
      member.communication_disabled_until !== null &&
      member.communication_disabled_until.getTime() > deps.clock.nowMs(),
  });

  async function guildBySnowflake(guildId: string) {
    const guild = await repo.guildBySnowflake(guildId);
    if (!guild) throw CommunityErrors.guild_not_found();
    return guild;
  }

  async function guildById(id: string) {
    const guild = await repo.guildById(id);
    if (!guild) throw CommunityErrors.guild_not_found();
    return guild;
  }

  const configured =
    (request: FastifyRequest, caller: Caller, resourceId: string, metadata: Record<string, unknown>) =>
    (trx: Kysely<Schema>) =>
      deps.audit.record(
        request,
        {
          eventType: 'bot_guild_configured',
          userId: caller.userId,
          actorId: caller.userId,
          resourceType: 'community_settings',
          resourceId,
          metadata,
        },
        trx,
      );

  return {
    start: () => sync.start(),
    stop: () => sync.stop(),
    purgeStaleStaging: () => repo.purgeStaleStaging(new Date(deps.clock.nowMs() - STALE_STAGING_MS)),

    listGuilds: async () => (await repo.listGuilds()).map(guildView),
    getGuild: async (guildId: string) => guildView(await guildBySnowflake(guildId)),
    async channels(guildId: string) {
      const guild = await guildBySnowflake(guildId);
      return (await repo.channelsOf(guild.id)).map(channelView(guild.guild_id));
    },
    async full(guildId: string) {
      const guild = await guildBySnowflake(guildId);
      return { guild: guildView(guild), channels: (await repo.channelsOf(guild.id)).map(channelView(guild.guild_id)) };
    },
    /** Removes the record only: the next sync recreates it while the bot is still in the guild. */
    async deleteGuild(id: string) {
      if (!(await repo.deleteGuild(id))) throw CommunityErrors.guild_not_found();
    },

    async members(guildId: string, query: Static<typeof MemberQuery>) {
      if (query.bot_only && query.humans_only) throw CommunityErrors.filters_conflict();
      const guild = await guildById(guildId);
      const filter: MemberFilter = {
        search: query.search,
        botOnly: query.bot_only,
        humansOnly: query.humans_only,
        hasRole: query.has_role,
      };
      const { rows, total } = await repo.memberPage(guild.id, filter, query.limit, query.offset);
      return { members: rows.map(memberView), total_count: total, has_more: query.offset + rows.length < total };
    },
    async member(guildId: string, userId: string) {
      const guild = await guildById(guildId);
      const member = await repo.member(guild.id, userId);
      if (!member) throw CommunityErrors.member_not_found();
      return memberView(member);
    },

    botSettings: () => repo.botSettings(),
    async updateBotSettings(request: FastifyRequest, caller: Caller, input: Static<typeof UpdateBotSettingsBody>) {
      await deps.db.transaction().execute(async (trx) => {
        await repo.updateBotSettings(input, trx);
        await configured(request, caller, 'global', { fields: Object.keys(input) })(trx);
      });
    },
    async guildSettings(guildId: string) {
      await guildBySnowflake(guildId);
      return (await repo.guildSettings(guildId)) ?? { guild_id: guildId, default_language: null };
    },
    async updateGuildSettings(
      request: FastifyRequest,
      caller: Caller,
      guildId: string,
      defaultLanguage: string | null,
    ) {
      await guildBySnowflake(guildId);
      await deps.db.transaction().execute(async (trx) => {
        await repo.saveGuildSettings(guildId, defaultLanguage, trx);
        await configured(request, caller, guildId, { guild_id: guildId, default_language: defaultLanguage })(trx);
      });
    },

    /** POST /v1/community/sync: `{ success, error, guilds_synced, channels_synced, roles_synced }`. */
    async syncGuilds(guildId: string | undefined) {
      const outcome = await sync.syncGuilds(guildId ?? null);
      const counts =
        outcome.success && 'guilds' in outcome.counts ? outcome.counts : { guilds: 0, channels: 0, roles: 0 };
      return {
        ...status(outcome),
        guilds_synced: counts.guilds,
        channels_synced: counts.channels,
        roles_synced: counts.roles,
      };
    },
    /** POST /v1/community/guilds/{guild_id}/members/sync: `{ success, error, members_synced }`. */
    async syncMembers(guildId: string) {
      const guild = await guildBySnowflake(guildId);
      const outcome = await sync.syncMembers(guild);
      return {
        ...status(outcome),
        members_synced: outcome.success && 'members' in outcome.counts ? outcome.counts.members : 0,
      };
    },
  };
}

const status = (outcome: SyncOutcome) =>
  outcome.success ? { success: true, error: null } : { success: false, error: outcome.error };

export type CommunityService = ReturnType<typeof createCommunityService>;
