import { sql, type Kysely } from 'kysely';
import type { Schema } from '../../platform/db/schema/index.js';
import type { BotChannel, BotGuild, BotMember, BotRole } from './schemas.js';

/** Rows per INSERT: well under PostgreSQL's 65,535 parameters for the widest table. */
const CHUNK = 500;

const chunks = <T>(items: readonly T[]): T[][] =>
  Array.from({ length: Math.ceil(items.length / CHUNK) }, (_, i) => items.slice(i * CHUNK, (i + 1) * CHUNK));

const lastById = <T>(items: T[], idOf: (item: T) => string): T[] => [
  ...new Map(items.map((item) => [idOf(item), item])).values(),
];

const date = (value: string | null | undefined) => (value ? new Date(value) : null);

const memberFields = (member: BotMember) => ({
  user_id: member.user_id,
  username: member.username,
  discriminator: member.discriminator ?? null,
  global_name: member.global_name ?? null,
  nickname: member.nickname ?? null,
  avatar: member.avatar ?? null,
  bot: member.bot ?? false,
  system: member.system ?? false,
  joined_at: date(member.joined_at),
  premium_since: date(member.premium_since),
  deaf: member.deaf ?? false,
  mute: member.mute ?? false,
  pending: member.pending ?? false,
  communication_disabled_until: date(member.communication_disabled_until),
  roles: member.roles ?? [],
});

const MEMBER_COLUMNS = [
  'user_id',
  'username',
  'discriminator',
  'global_name',
  'nickname',
  'avatar',
  'bot',
  'system',
  'joined_at',
  'premium_since',
  'deaf',
  'mute',
  'pending',
  'communication_disabled_until',
  'roles',
] as const;

/**
 * Serialises syncs across nodes (all share the database): a transaction-scoped advisory lock, taken first in
 * the sync's write, so a second sync writes only after the first committed and sees what it wrote. Without it
 * two member syncs of one guild interleave, and members only the first reported survive the second.
 */
const lockFor = (trx: Kysely<Schema>, name: string) =>
  sql`select pg_advisory_xact_lock(hashtext(${name}))`.execute(trx);

export interface MemberFilter {
  search?: string;
  botOnly: boolean;
  humansOnly: boolean;
  hasRole?: string;
}

export function createCommunityRepo(db: Kysely<Schema>) {
  const guilds = () =>
    db
      .selectFrom('community_guilds')
      .select([
        'id',
        'guild_id',
        'name',
        'icon',
        'owner_id',
        'member_count',
        'boost_count',
        'premium_tier',
        'bot_joined_at',
        'last_synced_at',
      ]);

  function members(guildId: string, filter: MemberFilter) {
    return db
      .selectFrom('community_members')
      .where('guild_id', '=', guildId)
      .$if(filter.search !== undefined, (query) => {
        const pattern = `%${filter.search!.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
        return query.where((eb) =>
          eb.or([
            eb('username', 'ilike', pattern),
            eb('global_name', 'ilike', pattern),
            eb('nickname', 'ilike', pattern),
          ]),
        );
      })
      .$if(filter.botOnly, (query) => query.where('bot', '=', true))
      .$if(filter.humansOnly, (query) => query.where('bot', '=', false))
      .$if(filter.hasRole !== undefined, (query) =>
        query.where(sql<boolean>`roles @> array[${filter.hasRole!}]::text[]`),
      );
  }

  return {
    listGuilds: () => guilds().orderBy('name').orderBy('guild_id').execute(),
    guildBySnowflake: (guildId: string) => guilds().where('guild_id', '=', guildId).executeTakeFirst(),
    guildById: (id: string) => guilds().where('id', '=', id).executeTakeFirst(),
    deleteGuild: async (id: string) =>
      (await db.deleteFrom('community_guilds').where('id', '=', id).executeTakeFirst()).numDeletedRows > 0n,

    channelsOf: (guildUuid: string) =>
      db
        .selectFrom('community_channels')
        .selectAll()
        .where('guild_id', '=', guildUuid)
        .orderBy('position')
        .orderBy('channel_id')
        .execute(),

    async memberPage(guildId: string, filter: MemberFilter, limit: number, offset: number) {
      const [rows, total] = await Promise.all([
        members(guildId, filter)
          .selectAll()
          .orderBy('username')
          .orderBy('user_id')
          .limit(limit)
          .offset(offset)
          .execute(),
        members(guildId, filter)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow(),
      ]);
      return { rows, total: Number(total.n) };
    },
    member: (guildId: string, userId: string) =>
      db
        .selectFrom('community_members')
        .selectAll()
        .where('guild_id', '=', guildId)
        .where('user_id', '=', userId)
        .executeTakeFirst(),

    botSettings: () => db.selectFrom('community_bot_settings').selectAll().executeTakeFirstOrThrow(),
    updateBotSettings: (
      fields: Partial<Omit<Schema['community_bot_settings'], 'id' | 'singleton' | 'updated_at'>>,
      trx: Kysely<Schema>,
    ) =>
      trx
        .updateTable('community_bot_settings')
        .set({ ...fields, updated_at: new Date() })
        .where('singleton', '=', true)
        .execute(),
    guildSettings: (guildId: string) =>
      db
        .selectFrom('community_guild_settings')
        .select(['guild_id', 'default_language'])
        .where('guild_id', '=', guildId)
        .executeTakeFirst(),
    saveGuildSettings: (guildId: string, defaultLanguage: string | null, trx: Kysely<Schema>) =>
      trx
        .insertInto('community_guild_settings')
        .values({ guild_id: guildId, default_language: defaultLanguage })
        .onConflict((oc) =>
          oc.column('guild_id').doUpdateSet({ default_language: defaultLanguage, updated_at: new Date() }),
        )
        .execute(),

    /**
     * Replaces what is known of these guilds with the bot's report, in the caller's transaction: the
     * guilds are upserted, their channels and roles replaced. With `everyGuild`, guilds the report does
     * not name (the bot left them) are removed.
     */
    async replaceGuilds(
      trx: Kysely<Schema>,
      reported: { guilds: BotGuild[]; channels: BotChannel[]; roles: BotRole[] },
      everyGuild: boolean,
      now: Date,
    ) {
      // One lock for every guild sync: a sync of all guilds touches each of them (and they are few and small).
      await lockFor(trx, 'community_guilds');
      // An id reported twice would make one INSERT … ON CONFLICT touch a row twice, which PostgreSQL refuses: the last one wins.
      const report = {
        guilds: lastById(reported.guilds, (guild) => guild.guild_id),
        channels: lastById(reported.channels, (channel) => channel.channel_id),
        roles: lastById(reported.roles, (role) => `${role.guild_id}/${role.role_id}`),
      };
      const ids = new Map<string, string>();
      for (const batch of chunks(report.guilds)) {
        const rows = await trx
          .insertInto('community_guilds')
          .values(
            batch.map((guild) => ({
              guild_id: guild.guild_id,
              name: guild.name,
              icon: guild.icon ?? null,
              owner_id: guild.owner_id ?? null,
              member_count: guild.member_count ?? 0,
              boost_count: guild.boost_count ?? 0,
              premium_tier: guild.premium_tier ?? 0,
              bot_joined_at: date(guild.bot_joined_at),
              last_synced_at: now,
            })),
          )
          .onConflict((oc) =>
            oc.column('guild_id').doUpdateSet((eb) => ({
              name: eb.ref('excluded.name'),
              icon: eb.ref('excluded.icon'),
              owner_id: eb.ref('excluded.owner_id'),
              member_count: eb.ref('excluded.member_count'),
              boost_count: eb.ref('excluded.boost_count'),
              premium_tier: eb.ref('excluded.premium_tier'),
              bot_joined_at: eb.ref('excluded.bot_joined_at'),
              last_synced_at: eb.ref('excluded.last_synced_at'),
              updated_at: now,
            })),
          )
          .returning(['id', 'guild_id'])
          .execute();
        for (const row of rows) ids.set(row.guild_id, row.id);
      }
      const guildUuids = [...ids.values()];
      if (everyGuild) {
        await trx
          .deleteFrom('community_guilds')
          .$if(guildUuids.length > 0, (query) => query.where('id', 'not in', guildUuids))
          .execute();
      }
      if (guildUuids.length > 0) {
        await trx.deleteFrom('community_channels').where('guild_id', 'in', guildUuids).execute();
        await trx.deleteFrom('community_roles').where('guild_id', 'in', guildUuids).execute();
      }
      const channels = report.channels.filter((channel) => ids.has(channel.guild_id));
      for (const batch of chunks(channels)) {
        await trx
          .insertInto('community_channels')
          .values(
            batch.map((channel) => ({
              guild_id: ids.get(channel.guild_id)!,
              channel_id: channel.channel_id,
              name: channel.name,
              channel_type: channel.type,
              parent_id: channel.parent_id ?? null,
              position: channel.position ?? 0,
              topic: channel.topic ?? null,
              nsfw: channel.nsfw ?? false,
            })),
          )
          // A channel moved between guilds is the same channel.
          .onConflict((oc) =>
            oc.column('channel_id').doUpdateSet((eb) => ({
              guild_id: eb.ref('excluded.guild_id'),
              name: eb.ref('excluded.name'),
              channel_type: eb.ref('excluded.channel_type'),
              parent_id: eb.ref('excluded.parent_id'),
              position: eb.ref('excluded.position'),
              topic: eb.ref('excluded.topic'),
              nsfw: eb.ref('excluded.nsfw'),
            })),
          )
          .execute();
      }
      const roles = report.roles.filter((role) => ids.has(role.guild_id));
      for (const batch of chunks(roles)) {
        await trx
          .insertInto('community_roles')
          .values(
            batch.map((role) => ({
              guild_id: ids.get(role.guild_id)!,
              role_id: role.role_id,
              name: role.name,
              color: role.color ?? 0,
              position: role.position ?? 0,
              permissions: role.permissions ?? '0',
              managed: role.managed ?? false,
              mentionable: role.mentionable ?? false,
              hoist: role.hoist ?? false,
            })),
          )
          .onConflict((oc) => oc.columns(['guild_id', 'role_id']).doNothing())
          .execute();
      }
      return { guilds: guildUuids.length, channels: channels.length, roles: roles.length };
    },

    /** One batch of a member sync, kept aside until the last one has arrived (see replaceMembers). */
    async stageMembers(syncId: string, batch: BotMember[]) {
      for (const part of chunks(lastById(batch, (member) => member.user_id))) {
        await db
          .insertInto('community_member_staging')
          .values(part.map((member) => ({ sync_id: syncId, ...memberFields(member) })))
          .onConflict((oc) => oc.columns(['sync_id', 'user_id']).doNothing())
          .execute();
      }
    },

    /**
     * In one transaction, after any other member sync of the guild: its members become exactly the staged ones; the staging rows go.
     * `beforeCommit` may throw to roll it all back (the sync's deadline passed meanwhile).
     */
    async replaceMembers(guildUuid: string, syncId: string, beforeCommit: () => void): Promise<number> {
      return db.transaction().execute(async (trx) => {
        await lockFor(trx, `community_members:${guildUuid}`);
        const staged = trx.selectFrom('community_member_staging').where('sync_id', '=', syncId);
        await trx
          .deleteFrom('community_members')
          .where('guild_id', '=', guildUuid)
          .where('user_id', 'not in', staged.select('user_id'))
          .execute();
        const upserted = await trx
          .insertInto('community_members')
          .columns(['guild_id', ...MEMBER_COLUMNS])
          .expression(staged.select([sql<string>`${guildUuid}::uuid`.as('guild_id'), ...MEMBER_COLUMNS]))
          .onConflict((oc) =>
            oc
              .columns(['guild_id', 'user_id'])
              .doUpdateSet((eb) =>
                Object.fromEntries(
                  MEMBER_COLUMNS.filter((column) => column !== 'user_id').map((column) => [
                    column,
                    eb.ref(`excluded.${column}`),
                  ]),
                ),
              ),
          )
          .executeTakeFirst();
        await trx
          .updateTable('community_guilds')
          .set({ last_synced_at: new Date() })
          .where('id', '=', guildUuid)
          .execute();
        await trx.deleteFrom('community_member_staging').where('sync_id', '=', syncId).execute();
        beforeCommit();
        return Number(upserted.numInsertedOrUpdatedRows ?? 0n);
      });
    },

    dropStaging: (syncId: string) => db.deleteFrom('community_member_staging').where('sync_id', '=', syncId).execute(),
    /** Staging rows of syncs that never finished (a node stopped mid-sync). */
    purgeStaleStaging: async (before: Date) =>
      Number(
        (await db.deleteFrom('community_member_staging').where('staged_at', '<', before).executeTakeFirst())
          .numDeletedRows,
      ),
  };
}

export type CommunityRepo = ReturnType<typeof createCommunityRepo>;
