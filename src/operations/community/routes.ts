import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { callerOf, requirePermission } from '../../platform/auth/hooks.js';
import { errorResponses } from '../../platform/http/envelopes.js';
import { CommunityErrors } from './errors.js';
import {
  BotSettings,
  Channel,
  Guild,
  GuildIdParams,
  GuildSettings,
  GuildSyncResult,
  Member,
  MemberList,
  MemberParams,
  MemberQuery,
  MemberSyncResult,
  SnowflakeGuildParams,
  SyncBody,
  UpdateBotSettingsBody,
  UpdateGuildSettingsBody,
} from './schemas.js';
import type { CommunityService } from './service.js';

const tags = ['Community'];
const Success = Type.Object({ success: Type.Boolean() });
const notFound = errorResponses(CommunityErrors.guild_not_found);
const syncNote =
  'Asks the connected community bot (on any node) over its WebSocket and writes its answer in one transaction. ' +
  'No bot, a bot error or a timeout answers 200 with `success: false` and `error` naming which; nothing is written then.';

export async function communityRoutes(
  fastify: FastifyInstance,
  { community }: { community: CommunityService },
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/v1/community/guilds',
    {
      config: { auth: requirePermission('community:read') },
      schema: { tags, summary: 'Guilds the bot is in', response: { 200: Type.Object({ data: Type.Array(Guild) }) } },
    },
    async () => ({ data: await community.listGuilds() }),
  );

  app.get(
    '/v1/community/guilds/:guild_id',
    {
      config: { auth: requirePermission('community:read') },
      schema: {
        tags,
        summary: 'A guild, by its platform id',
        params: SnowflakeGuildParams,
        response: { 200: Guild, ...notFound },
      },
    },
    async (request) => community.getGuild(request.params.guild_id),
  );

  app.get(
    '/v1/community/guilds/:guild_id/channels',
    {
      config: { auth: requirePermission('community:read') },
      schema: {
        tags,
        summary: "A guild's channels, by the guild's platform id",
        params: SnowflakeGuildParams,
        response: { 200: Type.Object({ data: Type.Array(Channel) }), ...notFound },
      },
    },
    async (request) => ({ data: await community.channels(request.params.guild_id) }),
  );

  app.get(
    '/v1/community/guilds/:guild_id/full',
    {
      config: { auth: requirePermission('community:read') },
      schema: {
        tags,
        summary: 'A guild with its channels',
        params: SnowflakeGuildParams,
        response: { 200: Type.Object({ guild: Guild, channels: Type.Array(Channel) }), ...notFound },
      },
    },
    async (request) => community.full(request.params.guild_id),
  );

  app.delete(
    '/v1/community/guilds/:guild_id',
    {
      config: { auth: requirePermission('community:delete') },
      schema: {
        tags,
        summary: "Remove a guild's record, by its internal id",
        description:
          'Removes the record only (with its channels, roles and members); the next sync recreates it while the bot is still in the guild.',
        params: GuildIdParams,
        response: { 204: Type.Null(), ...notFound },
      },
    },
    async (request, reply) => {
      await community.deleteGuild(request.params.guild_id);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/v1/community/sync',
    {
      config: { auth: requirePermission('community:sync') },
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        tags,
        summary: 'Sync guilds, channels and roles from the bot (waits up to 30 s)',
        description: syncNote,
        body: SyncBody,
        response: { 200: GuildSyncResult },
      },
    },
    async (request) => community.syncGuilds(request.body?.guild_id),
  );

  app.get(
    '/v1/community/settings',
    {
      config: { auth: requirePermission('community:read') },
      schema: { tags, summary: 'Bot settings', response: { 200: BotSettings } },
    },
    async () => community.botSettings(),
  );

  app.put(
    '/v1/community/settings',
    {
      config: { auth: requirePermission('community:edit') },
      schema: {
        tags,
        summary: 'Change bot settings (any of the fields)',
        description: 'Writes a bot_guild_configured audit event.',
        body: UpdateBotSettingsBody,
        response: { 200: Success },
      },
    },
    async (request) => {
      await community.updateBotSettings(request, callerOf(request), request.body);
      return { success: true };
    },
  );

  app.get(
    '/v1/community/guilds/:guild_id/settings',
    {
      config: { auth: requirePermission('community:read') },
      schema: {
        tags,
        summary: "A guild's settings, by its platform id",
        params: SnowflakeGuildParams,
        response: { 200: GuildSettings, ...notFound },
      },
    },
    async (request) => community.guildSettings(request.params.guild_id),
  );

  app.put(
    '/v1/community/guilds/:guild_id/settings',
    {
      config: { auth: requirePermission('community:edit') },
      schema: {
        tags,
        summary: "Change a guild's settings, by its platform id",
        description: 'default_language null means the global default. Writes a bot_guild_configured audit event.',
        params: SnowflakeGuildParams,
        body: UpdateGuildSettingsBody,
        response: { 200: Success, ...notFound },
      },
    },
    async (request) => {
      await community.updateGuildSettings(
        request,
        callerOf(request),
        request.params.guild_id,
        request.body.default_language,
      );
      return { success: true };
    },
  );

  app.get(
    '/v1/community/guilds/:guild_id/members',
    {
      config: { auth: requirePermission('community:read') },
      schema: {
        tags,
        summary: "A guild's members, by the guild's internal id",
        description:
          'search matches part of the username, global name or nickname (case-insensitive); ordered by username.',
        params: GuildIdParams,
        querystring: MemberQuery,
        response: {
          200: MemberList,
          ...errorResponses(CommunityErrors.guild_not_found, CommunityErrors.filters_conflict),
        },
      },
    },
    async (request) => community.members(request.params.guild_id, request.query),
  );

  app.get(
    '/v1/community/guilds/:guild_id/members/:user_id',
    {
      config: { auth: requirePermission('community:read') },
      schema: {
        tags,
        summary: 'A member: guild by internal id, user by platform id',
        params: MemberParams,
        response: { 200: Member, ...errorResponses(CommunityErrors.guild_not_found, CommunityErrors.member_not_found) },
      },
    },
    async (request) => community.member(request.params.guild_id, request.params.user_id),
  );

  app.post(
    '/v1/community/guilds/:guild_id/members/sync',
    {
      config: { auth: requirePermission('community:guild.sync') },
      schema: {
        tags,
        summary: "Sync a guild's members from the bot (waits up to 60 s), by the guild's platform id",
        description: syncNote,
        params: SnowflakeGuildParams,
        response: { 200: MemberSyncResult, ...notFound },
      },
    },
    async (request) => community.syncMembers(request.params.guild_id),
  );
}
