import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../app.js';
import { sql } from 'kysely';
import type { Client } from '../../../test/client.js';
import {
  bearer,
  buildTestApp,
  createRoleWith,
  createUser,
  forbidden,
  login,
  TEST_ADMIN,
  TEST_SYSTEM_KEY,
  UNAUTHORIZED,
  UNKNOWN_ID,
  usesPostgres,
  type TestApp,
} from '../../../test/helpers.js';
import { connectCommunityBot } from '../../../test/fakes/community-bot.js';
import { openSocket } from '../../../test/ws-client.js';

/** Snowflakes past 2^53: they must survive as strings end to end. */
const GUILD = '1234567890123456789';
const OTHER_GUILD = '1234567890123456790';
const guild = (guildId: string, name: string) => ({
  guild_id: guildId,
  name,
  icon: 'a1b2c3',
  owner_id: '80351110224678912',
  member_count: 3,
  boost_count: 7,
  premium_tier: 2,
  bot_joined_at: '2026-01-02T03:04:05.000Z',
});
const channels = [
  {
    channel_id: '2234567890123456781',
    guild_id: GUILD,
    name: 'general',
    type: 0,
    position: 1,
    topic: 'Chat',
    nsfw: false,
  },
  { channel_id: '2234567890123456782', guild_id: GUILD, name: 'Voice', type: 2, position: 2 },
  {
    channel_id: '2234567890123456783',
    guild_id: GUILD,
    name: 'odd',
    type: 99,
    position: 3,
    parent_id: '2234567890123456781',
  },
];
const roles = [
  {
    role_id: '3234567890123456781',
    guild_id: GUILD,
    name: 'Crew',
    color: 3447003,
    position: 1,
    permissions: '2147483648',
  },
];
const member = (n: number, extra: object = {}) => ({
  user_id: String(4234567890123456000n + BigInt(n)),
  username: `sailor${String(n).padStart(5, '0')}`,
  ...extra,
});

let t: TestApp;
let base: string;
let admin: string;
let api: Client;
let bot: Awaited<ReturnType<typeof connectCommunityBot>>;
beforeAll(async () => {
  t = await buildTestApp();
  base = await t.app.listen({ host: '127.0.0.1', port: 0 });
  admin = await login(t.app, 'admin', TEST_ADMIN.password);
  api = t.as(admin);
  bot = await connectCommunityBot(base, TEST_SYSTEM_KEY);
});
afterAll(async () => {
  bot.close();
  await t.close();
});

/** The bot reports the two guilds (the first with channels and roles), and the sync writes them. */
async function syncGuilds() {
  bot.will({ answer: 'data', guilds: [guild(GUILD, 'Harbour'), guild(OTHER_GUILD, 'Dock')], channels, roles });
  const response = await api.post('/v1/community/sync');
  expect(response.body).toEqual({
    success: true,
    error: null,
    guilds_synced: 2,
    channels_synced: 3,
    roles_synced: 1,
  });
  return (await api.get(`/v1/community/guilds/${GUILD}`).expect(200)).body;
}

describe('guild sync', () => {
  beforeEach(async () => {
    await syncGuilds();
  });

  it('stores what the bot reports, snowflakes as strings, with derived fields', async () => {
    const listed = (await api.get('/v1/community/guilds').expect(200)).body.data;
    expect(listed.map((g) => g.name)).toEqual(['Dock', 'Harbour']);
    const harbour = (await api.get(`/v1/community/guilds/${GUILD}`).expect(200)).body;
    expect(harbour).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      guild_id: GUILD,
      name: 'Harbour',
      icon: 'a1b2c3',
      icon_url: `https://cdn.discordapp.com/icons/${GUILD}/a1b2c3.png`,
      owner_id: '80351110224678912',
      member_count: 3,
      boost_count: 7,
      premium_tier: 2,
      bot_joined_at: '2026-01-02T03:04:05.000Z',
      last_synced_at: expect.any(String),
    });
    const { data } = (await api.get(`/v1/community/guilds/${GUILD}/channels`).expect(200)).body;
    expect(
      data.map(({ name, channel_type, channel_type_raw, is_text_based, is_voice }) => ({
        name,
        channel_type,
        channel_type_raw,
        is_text_based,
        is_voice,
      })),
    ).toEqual([
      { name: 'general', channel_type: 'Text', channel_type_raw: 0, is_text_based: true, is_voice: false },
      { name: 'Voice', channel_type: 'Voice', channel_type_raw: 2, is_text_based: false, is_voice: true },
      { name: 'odd', channel_type: 'Unknown', channel_type_raw: 99, is_text_based: false, is_voice: false },
    ]);
    expect(data[0]).toMatchObject({
      channel_id: '2234567890123456781',
      guild_id: GUILD,
      topic: 'Chat',
      parent_id: null,
    });
    const full = (await api.get(`/v1/community/guilds/${GUILD}/full`)).body;
    expect(full).toEqual({ guild: harbour, channels: data });
    expect((await api.get('/v1/community/guilds/999').expect(404)).body.code).toBe('community.guild_not_found');
  });

  it('a guild deleted through the API comes back with the next sync', async () => {
    const { id } = (await api.get(`/v1/community/guilds/${GUILD}`).expect(200)).body;
    expect((await api.delete(`/v1/community/guilds/${id}`)).status).toBe(204);
    expect((await api.get(`/v1/community/guilds/${GUILD}`)).status).toBe(404);
    expect((await api.delete(`/v1/community/guilds/${id}`)).status).toBe(404);
    await syncGuilds();
    expect((await api.get(`/v1/community/guilds/${GUILD}/channels`).expect(200)).body.data).toHaveLength(3);
  });

  it('syncs one guild when asked, leaving the others', async () => {
    bot.will({
      answer: 'data',
      guilds: [{ ...guild(GUILD, 'Harbour Renamed') }, guild(OTHER_GUILD, 'Dock Renamed')],
      channels: channels.slice(0, 1),
      roles: [],
    });
    expect((await api.post('/v1/community/sync', { guild_id: GUILD })).body).toEqual({
      success: true,
      error: null,
      guilds_synced: 1,
      channels_synced: 1,
      roles_synced: 0,
    });
    expect(bot.requests.at(-1)).toMatchObject({ type: 'SyncRequest', scope: 'guilds', guildId: GUILD });
    expect((await api.get(`/v1/community/guilds/${GUILD}`).expect(200)).body.name).toBe('Harbour Renamed');
    expect((await api.get(`/v1/community/guilds/${OTHER_GUILD}`).expect(200)).body.name).toBe('Dock');
  });

  it('writes nothing when the bot reports an error, or does not answer in 30 s', async () => {
    bot.will({ answer: 'error', error: 'Missing Access' });
    expect((await api.post('/v1/community/sync')).body).toEqual({
      success: false,
      error: 'The community bot reported an error: Missing Access',
      guilds_synced: 0,
      channels_synced: 0,
      roles_synced: 0,
    });
    bot.will({ answer: 'ignore' });
    const asked = bot.requests.length;
    const pending = api.post('/v1/community/sync');
    await expect.poll(() => bot.requests.length).toBe(asked + 1);
    t.clock.advance(33_000);
    try {
      expect((await pending).body).toMatchObject({
        success: false,
        error: 'The community bot did not finish within 30 seconds',
      });
    } finally {
      t.clock.advance(-33_000);
    }
    expect((await api.get(`/v1/community/guilds/${GUILD}`).expect(200)).body.name).toBe('Harbour');
  });
});

describe('member sync and search', () => {
  let guildId: string;
  beforeAll(async () => {
    guildId = (await syncGuilds()).id;
  });

  const members = [
    member(1, {
      global_name: 'Captain Ahab',
      nickname: 'Cap',
      roles: ['3234567890123456781'],
      discriminator: '0',
      avatar: 'f00',
    }),
    member(2, {
      global_name: 'Ishmael',
      discriminator: '1234',
      communication_disabled_until: '2099-01-01T00:00:00.000Z',
    }),
    member(3, { bot: true }),
    ...Array.from({ length: 2497 }, (_, i) => member(100 + i)),
  ];

  it('replaces the members with what the bot reports, in batches, and filters them', async () => {
    bot.will({ answer: 'data', members, batchSize: 250 });
    const sync = await api.post(`/v1/community/guilds/${GUILD}/members/sync`);
    expect(sync.body).toEqual({ success: true, error: null, members_synced: 2500 });
    expect(bot.requests.at(-1)).toMatchObject({ scope: 'members', guildId: GUILD });

    const list = (query: string) => api.get(`/v1/community/guilds/${guildId}/members?${query}`);
    const first = (await list('limit=2').expect(200)).body;
    expect(first).toMatchObject({ total_count: 2500, has_more: true });
    expect(first.members[0]).toEqual({
      id: expect.any(String),
      guild_id: guildId,
      user_id: '4234567890123456001',
      username: 'sailor00001',
      discriminator: '0',
      global_name: 'Captain Ahab',
      nickname: 'Cap',
      avatar: 'f00',
      avatar_url: 'https://cdn.discordapp.com/avatars/4234567890123456001/f00.png',
      bot: false,
      system: false,
      joined_at: null,
      premium_since: null,
      deaf: false,
      mute: false,
      pending: false,
      communication_disabled_until: null,
      roles: ['3234567890123456781'],
      display_name: 'Cap',
      formatted_username: 'sailor00001',
      is_timed_out: false,
    });
    expect(first.members[1]).toMatchObject({
      display_name: 'Ishmael',
      formatted_username: 'sailor00002#1234',
      is_timed_out: true,
    });
    expect((await list('search=ahab')).body).toMatchObject({ total_count: 1, has_more: false });
    expect((await list('search=CAP').expect(200)).body.members.map((m) => m.user_id)).toEqual(['4234567890123456001']);
    expect((await list('bot_only=true').expect(200)).body.total_count).toBe(1);
    expect((await list('humans_only=true&limit=100&offset=2400')).body).toMatchObject({
      total_count: 2499,
      has_more: false,
    });
    expect((await list('has_role=3234567890123456781').expect(200)).body.total_count).toBe(1);
    expect((await list('bot_only=true&humans_only=true').expect(400)).body.code).toBe('community.filters_conflict');
    expect((await list('search=100%25').expect(200)).body.total_count).toBe(0);

    const one = await api.get(`/v1/community/guilds/${guildId}/members/4234567890123456003`);
    expect(one.body).toMatchObject({ username: 'sailor00003', bot: true });
    expect((await api.get(`/v1/community/guilds/${guildId}/members/1`).expect(404)).body.code).toBe(
      'community.member_not_found',
    );
    expect((await api.get(`/v1/community/guilds/${UNKNOWN_ID}/members`).expect(404)).body.code).toBe(
      'community.guild_not_found',
    );

    // A failed sync leaves the members as they were, and no staged rows behind.
    bot.will({ answer: 'error', error: 'Rate limited', afterBatches: { members: [member(9)] } });
    expect((await api.post(`/v1/community/guilds/${GUILD}/members/sync`)).body).toEqual({
      success: false,
      error: 'The community bot reported an error: Rate limited',
      members_synced: 0,
    });
    expect((await list('limit=1').expect(200)).body.total_count).toBe(2500);
    await expect
      .poll(async () => (await t.database.db.selectFrom('community_member_staging').select('user_id').execute()).length)
      .toBe(0);

    // A smaller report removes the members who left.
    bot.will({ answer: 'data', members: members.slice(0, 3) });
    expect((await api.post(`/v1/community/guilds/${GUILD}/members/sync`).expect(200)).body.members_synced).toBe(3);
    expect((await list('limit=10').expect(200)).body.total_count).toBe(3);
  });
});

describe('a member sync past its deadline', () => {
  it('writes nothing, even when the last batch arrives after the answer', async () => {
    const { id: guildId } = await syncGuilds();
    const total = async () =>
      (await api.get(`/v1/community/guilds/${guildId}/members`, { query: { limit: 1 } }).expect(200)).body.total_count;
    const before = await total();
    bot.will({ answer: 'stall', members: [member(70_000)] });
    const asked = bot.requests.length;
    const pending = api.post(`/v1/community/guilds/${GUILD}/members/sync`);
    await expect.poll(() => bot.requests.length).toBe(asked + 1);
    t.clock.advance(63_000);
    try {
      expect((await pending).body).toEqual({
        success: false,
        error: 'The community bot did not finish within 60 seconds',
        members_synced: 0,
      });
      // The bot's node watches the deadline on its own (real nodes' clocks never run back): let it see it.
      await new Promise((resolve) => setTimeout(resolve, 300));
    } finally {
      t.clock.advance(-63_000);
    }
    const { requestId } = bot.requests.at(-1)!;
    bot.socket.send({ type: 'SyncData', requestId, members: [member(70_001)], done: true });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await total()).toBe(before);
    expect(
      await t.database.db
        .selectFrom('community_member_staging')
        .select('user_id')
        .where('sync_id', '=', requestId as string)
        .execute(),
    ).toEqual([]);
  });
});

describe('two member syncs of one guild at once', () => {
  /** Sessions of this test's database waiting for a lock (PostgreSQL; the embedded one runs one transaction at a time). */
  const waitingForLocks = async () =>
    (
      await sql<{
        n: number;
      }>`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`.execute(
        t.database.db,
      )
    ).rows[0]!.n;

  /**
   * On PostgreSQL the test holds the guild's row, so the first sync's write stops inside its transaction;
   * the second sync then starts its write, and only then is the row let go.
   */
  async function overlapping(first: () => Promise<unknown>, second: () => Promise<unknown>, guildUuid: string) {
    if (!usesPostgres) return Promise.all([first(), second()]);
    let answers: Promise<unknown[]> | undefined;
    await t.database.db.transaction().execute(async (trx) => {
      await trx.selectFrom('community_guilds').select('id').where('id', '=', guildUuid).forUpdate().execute();
      const one = first();
      await expect.poll(waitingForLocks).toBe(1);
      const two = second();
      await expect.poll(waitingForLocks).toBe(2);
      answers = Promise.all([one, two]);
    });
    return answers;
  }

  it('run one after the other: the members are exactly one report, never a mix of both', async () => {
    await syncGuilds();
    const { id: guildUuid } = (await api.get(`/v1/community/guilds/${OTHER_GUILD}`).expect(200)).body;
    bot.will({ answer: 'data', members: [member(1), member(2), member(3)] });
    expect((await api.post(`/v1/community/guilds/${OTHER_GUILD}/members/sync`).expect(200)).body.members_synced).toBe(
      3,
    );

    const reports = [
      [member(1), member(10), member(11)],
      [member(2), member(20)],
    ];
    for (const members of reports) bot.will({ answer: 'data', members });
    const sync = () => api.post(`/v1/community/guilds/${OTHER_GUILD}/members/sync`).expect(200);
    const answers = (await overlapping(sync, sync, guildUuid)) as Awaited<ReturnType<typeof sync>>[];
    expect(answers.map((answer) => answer.body.success)).toEqual([true, true]);

    const stored = (
      await api.get(`/v1/community/guilds/${guildUuid}/members`, { query: { limit: 10 } }).expect(200)
    ).body.members.map((m) => m.username);
    const reported = reports.map((members) => members.map((m) => m.username));
    // On PostgreSQL the second sync wrote last; on the embedded database either may have.
    expect(usesPostgres ? [reported[1]] : reported).toContainEqual(stored);
  });
});

describe('settings', () => {
  it('reads and changes the bot settings and per-guild settings, each change audited', async () => {
    const before = (await api.get('/v1/community/settings')).body;
    expect(before).toMatchObject({
      auto_sync_enabled: true,
      sync_interval_seconds: 3600,
      default_language: 'en',
      command_cooldown_seconds: 3,
    });
    expect(
      (await api.put('/v1/community/settings', { sync_interval_seconds: 900, default_language: 'de' })).body,
    ).toEqual({ success: true });
    expect((await api.get('/v1/community/settings')).body).toMatchObject({
      sync_interval_seconds: 900,
      default_language: 'de',
    });
    expect((await api.put('/v1/community/settings', { sync_interval_seconds: 5 })).status).toBe(400);
    await api.put('/v1/community/settings', { sync_interval_seconds: 3600, default_language: 'en' });

    await syncGuilds();
    expect((await api.get(`/v1/community/guilds/${GUILD}/settings`)).body).toEqual({
      guild_id: GUILD,
      default_language: null,
    });
    expect((await api.put(`/v1/community/guilds/${GUILD}/settings`, { default_language: 'nl' })).body).toEqual({
      success: true,
    });
    expect((await api.get(`/v1/community/guilds/${GUILD}/settings`)).body).toEqual({
      guild_id: GUILD,
      default_language: 'nl',
    });
    expect((await api.put('/v1/community/guilds/42/settings', { default_language: null })).status).toBe(404);
    const events = await t.database.db
      .selectFrom('audit_events')
      .select(['resource_id', 'metadata'])
      .where('event_type', '=', 'bot_guild_configured')
      .execute();
    expect(events.map((event) => event.resource_id)).toEqual(expect.arrayContaining(['global', GUILD]));
  });
});

describe('access', () => {
  it('needs the community permissions of each row', async () => {
    expect((await t.as(null).get('/v1/community/guilds')).body).toEqual(UNAUTHORIZED);
    const user = await createUser(t.app);
    expect((await t.as(user.token).get('/v1/community/guilds')).body).toEqual(forbidden('community:read'));
    const reader = await createUser(t.app, [
      'role_user',
      await createRoleWith(t.app, `community_reader_${Date.now()}`, ['community:read']),
    ]);
    expect((await t.as(reader.token).get('/v1/community/guilds')).status).toBe(200);
    expect((await t.as(reader.token).post('/v1/community/sync', {})).body).toEqual(forbidden('community:sync'));
    expect((await t.as(reader.token).put('/v1/community/settings', {})).body).toEqual(forbidden('community:edit'));
  });

  it('lets only the system key identify as the bot, and only the bot send sync answers', async () => {
    const user = await createUser(t.app);
    const socket = await openSocket(base, { headers: bearer(user.token) });
    await socket.next('Welcome');
    expect(await socket.request({ type: 'Identify', client: 'community_bot' }, 'Error')).toMatchObject({
      code: 'ws.identify_forbidden',
    });
    expect(await socket.request({ type: 'SyncError', requestId: UNKNOWN_ID, error: 'x' }, 'Error')).toMatchObject({
      code: 'ws.not_the_bot',
    });
    socket.close();
  });
});

describe('the bot on another node', () => {
  it('answers a sync asked on this node; without any bot the answer says so', async () => {
    const other = await buildApp(t.config, { database: t.database, kv: t.kv, clock: t.clock }, { logger: false });
    try {
      bot.close();
      await bot.socket.closed;
      expect((await api.post('/v1/community/sync')).body).toEqual({
        success: false,
        error: 'No community bot is connected',
        guilds_synced: 0,
        channels_synced: 0,
        roles_synced: 0,
      });
      bot = await connectCommunityBot(await other.listen({ host: '127.0.0.1', port: 0 }), TEST_SYSTEM_KEY);
      await syncGuilds();
    } finally {
      bot.close();
      bot = await connectCommunityBot(base, TEST_SYSTEM_KEY);
      await other.close();
    }
  });
});
