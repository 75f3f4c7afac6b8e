import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Clock } from '../../platform/clock.js';
import type { Schema } from '../../platform/db/schema/index.js';
import type { KeyValueStore } from '../../platform/kv/index.js';
import type { BotLink, BotMessage } from '../realtime/service.js';
import type { CommunityRepo } from './repo.js';
import type { BotChannel, BotGuild, BotRole } from './schemas.js';

/** The spec's waits: 30 s for guilds, 60 s for members. */
export const SYNC_TIMEOUT_MS = { guilds: 30_000, members: 60_000 } as const;
/** How long the node holding the bot has to say it took the order (pub/sub latency, not the bot's work). */
const ACCEPT_MS = 2000;
/** The asking node waits this much past the deadline for the result of a sync that finished just in time. */
const GRACE_MS = 2000;
/** Guilds, channels and roles one guild sync may report (they are held in memory until the last batch). */
const MAX_GUILD_REPORT_ITEMS = 50_000;
const DEADLINE_CHECK_MS = 100;
const ORDERS = 'community:sync:orders';
const REPLIES = 'community:sync:replies';

export type SyncCounts = { guilds: number; channels: number; roles: number } | { members: number };
export type SyncOutcome = { success: true; counts: SyncCounts } | { success: false; error: string };

interface SyncOrder {
  requestId: string;
  scope: 'guilds' | 'members';
  /** The guild snowflake (for members, also its row id); null: every guild. */
  guildId: string | null;
  guildUuid: string | null;
  deadline: number;
}

type Reply = { requestId: string; status: 'accepted' } | { requestId: string; status: 'done'; outcome: SyncOutcome };

interface Deps {
  db: Kysely<Schema>;
  kv: KeyValueStore;
  bot: BotLink;
  repo: CommunityRepo;
  clock: Clock;
  log: FastifyBaseLogger;
}

const failed = (error: string): SyncOutcome => ({ success: false, error });
const NO_BOT = 'No community bot is connected';

/**
 * Asks the community bot for data, wherever it is connected: the order goes to every node over
 * pub/sub, the node holding the bot claims it (once, through the key-value store), relays it to the
 * bot, writes what the bot reports and publishes the outcome. The asking node only waits.
 */
export function createBotSync(deps: Deps) {
  const { kv, bot, repo, clock, log } = deps;
  const waiting = new Map<string, { accepted(): void; done(outcome: SyncOutcome): void }>();
  const running = new Map<string, (message: BotMessage) => Promise<void> | void>();
  const unsubscribers: (() => Promise<void>)[] = [];

  /** Resolves once the (injectable) clock reaches `deadline`; `stop` ends the wait early. */
  function deadlinePassed(deadline: number): { passed: Promise<void>; stop(): void } {
    let timer: NodeJS.Timeout | undefined;
    const passed = new Promise<void>((resolve) => {
      timer = setInterval(() => clock.nowMs() >= deadline && resolve(), DEADLINE_CHECK_MS);
      timer.unref();
    });
    return { passed, stop: () => clearInterval(timer) };
  }

  async function ask(order: SyncOrder): Promise<SyncOutcome> {
    let accepted!: () => void;
    let done!: (outcome: SyncOutcome) => void;
    const acceptance = new Promise<boolean>((resolve) => {
      accepted = () => resolve(true);
      setTimeout(() => resolve(false), ACCEPT_MS).unref();
    });
    const result = new Promise<SyncOutcome>((resolve) => (done = resolve));
    waiting.set(order.requestId, { accepted, done });
    const timeout = deadlinePassed(order.deadline + GRACE_MS);
    try {
      await kv.publish(ORDERS, JSON.stringify(order));
      if (!(await acceptance)) return failed(NO_BOT);
      const seconds = SYNC_TIMEOUT_MS[order.scope] / 1000;
      return await Promise.race([
        result,
        timeout.passed.then(() => failed(`The community bot did not finish within ${seconds} seconds`)),
      ]);
    } finally {
      timeout.stop();
      waiting.delete(order.requestId);
    }
  }

  async function onOrder(order: SyncOrder): Promise<void> {
    if (!bot.connected()) return;
    if (!(await kv.setIfAbsent(`community:sync:claim:${order.requestId}`, '1', 600))) return;
    await reply({ requestId: order.requestId, status: 'accepted' });
    const outcome = await carryOut(order).catch((err: unknown) => {
      log.error({ err }, 'a community sync failed');
      return failed('The sync could not be written');
    });
    await reply({ requestId: order.requestId, status: 'done', outcome });
  }

  const reply = (message: Reply) => kv.publish(REPLIES, JSON.stringify(message));

  function onReply(message: Reply): void {
    const waiter = waiting.get(message.requestId);
    if (message.status === 'accepted') waiter?.accepted();
    else waiter?.done(message.outcome);
  }

  /** On the bot's node: relays the order, collects the answer until the last batch, then writes it. */
  async function carryOut(order: SyncOrder): Promise<SyncOutcome> {
    const collector = order.scope === 'guilds' ? guildCollector(order) : memberCollector(order);
    running.set(order.requestId, collector.receive);
    const timeout = deadlinePassed(order.deadline);
    const seconds = SYNC_TIMEOUT_MS[order.scope] / 1000;
    try {
      const sent = bot.send({
        type: 'SyncRequest',
        requestId: order.requestId,
        scope: order.scope,
        guildId: order.guildId,
        deadline: new Date(order.deadline).toISOString(),
      });
      if (!sent) return failed(NO_BOT);
      // The collector stops taking batches the moment the deadline wins (`finish` is idempotent).
      void timeout.passed.then(() =>
        collector.finish(failed(`The community bot did not finish within ${seconds} seconds`)),
      );
      const answer = await collector.finished;
      if (!answer.success) await collector.discard();
      return answer;
    } finally {
      timeout.stop();
      running.delete(order.requestId);
    }
  }

  /** Thrown inside a sync's transaction when its deadline has passed: the write rolls back. */
  const tooLate = (order: SyncOrder) => {
    if (clock.nowMs() > order.deadline) throw new Error('the sync deadline passed before its write committed');
  };

  /** A sync's outcome, settled once: later batches, a second `done` or the deadline change nothing. */
  function outcomeOnce() {
    let settle!: (outcome: SyncOutcome) => void;
    let over = false;
    const finished = new Promise<SyncOutcome>((resolve) => (settle = resolve));
    return {
      finished,
      isOver: () => over,
      finish(outcome: SyncOutcome) {
        if (over) return;
        over = true;
        settle(outcome);
      },
    };
  }

  /** Guilds, channels and roles are few: kept in memory, written in one transaction at the end. */
  function guildCollector(order: SyncOrder) {
    const report = { guilds: [] as BotGuild[], channels: [] as BotChannel[], roles: [] as BotRole[] };
    const outcome = outcomeOnce();
    const { finish } = outcome;
    return {
      ...outcome,
      discard: async () => {},
      receive(message: BotMessage) {
        if (outcome.isOver()) return;
        if (message.type === 'SyncError')
          return finish(failed(`The community bot reported an error: ${message.error}`));
        report.guilds.push(
          ...(message.guilds ?? []).filter((guild) => order.guildId === null || guild.guild_id === order.guildId),
        );
        report.channels.push(...(message.channels ?? []));
        report.roles.push(...(message.roles ?? []));
        if (report.guilds.length + report.channels.length + report.roles.length > MAX_GUILD_REPORT_ITEMS) {
          return finish(
            failed(`The community bot reported more than ${MAX_GUILD_REPORT_ITEMS} guilds, channels and roles`),
          );
        }
        if (!message.done) return;
        if (order.guildId !== null && report.guilds.length === 0)
          return finish(failed(`The community bot does not know guild ${order.guildId}`));
        running.delete(order.requestId);
        deps.db
          .transaction()
          .execute(async (trx) => {
            const counts = await repo.replaceGuilds(trx, report, order.guildId === null, clock.now());
            tooLate(order);
            return counts;
          })
          .then(
            (counts) => finish({ success: true, counts }),
            (err: unknown) => {
              log.error({ err }, 'could not write a guild sync');
              finish(failed('The sync could not be written'));
            },
          );
      },
    };
  }

  /** Members may be 100,000: each batch goes to the staging table as it comes, never all in memory. */
  function memberCollector(order: SyncOrder) {
    let chain = Promise.resolve();
    const outcome = outcomeOnce();
    const { finish } = outcome;
    const stagingFailed = (err: unknown) => {
      log.error({ err }, 'could not stage community members');
      finish(failed('The sync could not be written'));
    };
    return {
      ...outcome,
      discard: async () => {
        chain = chain.then(() => repo.dropStaging(order.requestId)).then(() => undefined, stagingFailed);
        await chain;
      },
      /** The returned promise settles once the batch is staged: the bot's socket reads no further until then. */
      receive(message: BotMessage): Promise<void> | void {
        if (outcome.isOver()) return;
        if (message.type === 'SyncError')
          return finish(failed(`The community bot reported an error: ${message.error}`));
        const batch = message.members ?? [];
        chain = chain
          .then(async () => {
            if (outcome.isOver()) return;
            if (batch.length) await repo.stageMembers(order.requestId, batch);
            if (message.done && !outcome.isOver()) {
              const members = await repo.replaceMembers(order.guildUuid!, order.requestId, () => {
                tooLate(order);
                if (outcome.isOver()) throw new Error('the sync ended before its write committed');
              });
              finish({ success: true, counts: { members } });
            }
          })
          .catch(stagingFailed);
        return chain;
      },
    };
  }

  const parsed =
    <T>(handle: (message: T) => unknown) =>
    (raw: string) => {
      try {
        void Promise.resolve(handle(JSON.parse(raw) as T)).catch((err: unknown) =>
          log.error({ err }, 'community sync message failed'),
        );
      } catch (err) {
        log.warn({ err }, 'ignoring a malformed community sync message');
      }
    };

  return {
    async start(): Promise<void> {
      bot.onMessage((message) => running.get(message.requestId)?.(message));
      unsubscribers.push(await kv.subscribe(ORDERS, parsed(onOrder)), await kv.subscribe(REPLIES, parsed(onReply)));
    },
    async stop(): Promise<void> {
      await Promise.all(unsubscribers.splice(0).map((unsubscribe) => unsubscribe()));
    },
    /** Asks the bot for every guild (or one), with channels and roles, and writes them; waits up to 30 s. */
    syncGuilds: (guildId: string | null) =>
      ask({
        requestId: randomUUID(),
        scope: 'guilds',
        guildId,
        guildUuid: null,
        deadline: clock.nowMs() + SYNC_TIMEOUT_MS.guilds,
      }),
    /** Asks the bot for one guild's members and makes them the stored ones; waits up to 60 s. */
    syncMembers: (guild: { id: string; guild_id: string }) =>
      ask({
        requestId: randomUUID(),
        scope: 'members',
        guildId: guild.guild_id,
        guildUuid: guild.id,
        deadline: clock.nowMs() + SYNC_TIMEOUT_MS.members,
      }),
  };
}
