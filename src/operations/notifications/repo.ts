import { sql, type Kysely } from 'kysely';
import type { Schema } from '../../platform/db/schema/index.js';
import type { NotificationChannelType } from '../../platform/db/schema/operations.js';

const CHANNEL_COLUMNS = [
  'id',
  'user_id',
  'type',
  'name',
  'enabled',
  'config',
  'secrets_sealed',
  'last_status',
  'last_error',
  'last_success_at',
  'last_failure_at',
  'failures_in_row',
  'failing',
  'failing_notified_at',
  'created_at',
  'updated_at',
] as const;

const RULE_COLUMNS = [
  'id',
  'user_id',
  'name',
  'event_types',
  'device_ids',
  'geofence_ids',
  'channel_ids',
  'quiet_from',
  'quiet_to',
  'enabled',
  'created_at',
  'updated_at',
] as const;

export interface ChannelFields {
  name?: string;
  enabled?: boolean;
  config?: Record<string, unknown>;
  secrets_sealed?: string | null;
}

export interface RuleFields {
  name?: string;
  event_types?: string[];
  device_ids?: string[] | null;
  geofence_ids?: string[] | null;
  channel_ids?: string[];
  quiet_from?: string | null;
  quiet_to?: string | null;
  enabled?: boolean;
}

const json = (value: unknown) => JSON.stringify(value);
const nullableJson = (value: unknown[] | null | undefined) =>
  value === undefined ? undefined : value === null ? null : json(value);

const channelRow = ({ config, ...fields }: ChannelFields) => ({
  ...fields,
  ...(config === undefined ? {} : { config: json(config) }),
});

const ruleRow = ({ event_types, device_ids, geofence_ids, channel_ids, ...fields }: RuleFields) => ({
  ...fields,
  ...(event_types === undefined ? {} : { event_types: json(event_types) }),
  ...(device_ids === undefined ? {} : { device_ids: nullableJson(device_ids) }),
  ...(geofence_ids === undefined ? {} : { geofence_ids: nullableJson(geofence_ids) }),
  ...(channel_ids === undefined ? {} : { channel_ids: json(channel_ids) }),
});

export type ChannelRow = Awaited<ReturnType<ReturnType<typeof createNotificationsRepo>['channel']>> & object;
export type RuleRow = Awaited<ReturnType<ReturnType<typeof createNotificationsRepo>['rule']>> & object;

export function createNotificationsRepo(db: Kysely<Schema>) {
  return {
    channels: (userId: string, limit: number, offset: number) =>
      db
        .selectFrom('notification_channels')
        .select(CHANNEL_COLUMNS)
        .where('user_id', '=', userId)
        .orderBy('created_at')
        .orderBy('id')
        .limit(limit)
        .offset(offset)
        .execute(),

    async countChannels(userId: string): Promise<number> {
      const row = await db
        .selectFrom('notification_channels')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('user_id', '=', userId)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },

    /** A channel by id, of this user when one is named. */
    channel: (id: string, userId?: string) =>
      db
        .selectFrom('notification_channels')
        .select(CHANNEL_COLUMNS)
        .where('id', '=', id)
        .$if(userId !== undefined, (query) => query.where('user_id', '=', userId!))
        .executeTakeFirst(),

    /** Which of these ids are channels of this user. */
    async ownChannelIds(userId: string, ids: string[]): Promise<Set<string>> {
      if (ids.length === 0) return new Set();
      const rows = await db
        .selectFrom('notification_channels')
        .select('id')
        .where('user_id', '=', userId)
        .where('id', 'in', ids)
        .execute();
      return new Set(rows.map((row) => row.id));
    },

    insertChannel: (userId: string, type: NotificationChannelType, fields: ChannelFields & { name: string }) =>
      db
        .insertInto('notification_channels')
        .values({ ...channelRow(fields), name: fields.name, config: json(fields.config ?? {}), user_id: userId, type })
        .returning(CHANNEL_COLUMNS)
        .executeTakeFirstOrThrow(),

    updateChannel: (id: string, userId: string, fields: ChannelFields) =>
      db
        .updateTable('notification_channels')
        .set({ ...channelRow(fields), updated_at: new Date() })
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .returning(CHANNEL_COLUMNS)
        .executeTakeFirst(),

    /** Deletes the channel and takes it out of the owner's rules, in one transaction. */
    deleteChannel: (id: string, userId: string): Promise<boolean> =>
      db.transaction().execute(async (trx) => {
        const result = await trx
          .deleteFrom('notification_channels')
          .where('id', '=', id)
          .where('user_id', '=', userId)
          .executeTakeFirst();
        if (Number(result.numDeletedRows) === 0) return false;
        await trx
          .updateTable('notification_rules')
          .set({ channel_ids: sql<string>`channel_ids - ${id}::text`, updated_at: new Date() })
          .where('user_id', '=', userId)
          .where(sql<boolean>`channel_ids ? ${id}::text`)
          .execute();
        return true;
      }),

    rules: (userId: string, limit: number, offset: number) =>
      db
        .selectFrom('notification_rules')
        .select(RULE_COLUMNS)
        .where('user_id', '=', userId)
        .orderBy('created_at')
        .orderBy('id')
        .limit(limit)
        .offset(offset)
        .execute(),

    async countRules(userId: string): Promise<number> {
      const row = await db
        .selectFrom('notification_rules')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('user_id', '=', userId)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },

    rule: (id: string, userId: string) =>
      db
        .selectFrom('notification_rules')
        .select(RULE_COLUMNS)
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .executeTakeFirst(),

    /** Every enabled rule of the instance (each node keeps them in memory to match events). */
    enabledRules: () =>
      db.selectFrom('notification_rules').select(RULE_COLUMNS).where('enabled', '=', true).orderBy('id').execute(),

    insertRule: (userId: string, fields: RuleFields & { name: string; event_types: string[]; channel_ids: string[] }) =>
      db
        .insertInto('notification_rules')
        .values({
          ...ruleRow(fields),
          name: fields.name,
          event_types: json(fields.event_types),
          channel_ids: json(fields.channel_ids),
          user_id: userId,
        })
        .returning(RULE_COLUMNS)
        .executeTakeFirstOrThrow(),

    updateRule: (id: string, userId: string, fields: RuleFields) =>
      db
        .updateTable('notification_rules')
        .set({ ...ruleRow(fields), updated_at: new Date() })
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .returning(RULE_COLUMNS)
        .executeTakeFirst(),

    async deleteRule(id: string, userId: string): Promise<boolean> {
      const result = await db
        .deleteFrom('notification_rules')
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    /** The channels of these ids (the sender's, once per batch). */
    channelsByIds: (ids: string[]) =>
      ids.length === 0
        ? Promise.resolve([])
        : db.selectFrom('notification_channels').select(CHANNEL_COLUMNS).where('id', 'in', ids).execute(),

    /** A send succeeded: the channel is well again. */
    noteSuccess: (id: string, status: number | null, at: Date) =>
      db
        .updateTable('notification_channels')
        .set({
          last_status: status,
          last_success_at: at,
          failures_in_row: 0,
          failing: false,
          failing_notified_at: null,
        })
        .where('id', '=', id)
        .execute(),

    /** A send failed: counted; answers the failures in a row now. */
    async noteFailure(id: string, status: number | null, error: string, at: Date): Promise<number> {
      const row = await db
        .updateTable('notification_channels')
        .set((eb) => ({
          last_status: status,
          last_error: error,
          last_failure_at: at,
          failures_in_row: eb('failures_in_row', '+', 1),
        }))
        .where('id', '=', id)
        .returning('failures_in_row')
        .executeTakeFirst();
      return row?.failures_in_row ?? 0;
    },

    /** Marks the channel failing; answers it only to the first to mark it since it last succeeded (who mails). */
    markFailing: (id: string, at: Date) =>
      db
        .updateTable('notification_channels')
        .set({ failing: true, failing_notified_at: at })
        .where('id', '=', id)
        .where('failing_notified_at', 'is', null)
        .returning(['id', 'user_id', 'name', 'last_error'])
        .executeTakeFirst(),

    /** The far side says the destination is gone (a push subscription ended): the channel stops. */
    disableGone: (id: string, detail: string) =>
      db
        .updateTable('notification_channels')
        .set({ enabled: false, last_error: detail, updated_at: new Date() })
        .where('id', '=', id)
        .execute(),

    vapidKeys: () =>
      db.selectFrom('notification_vapid_keys').select(['public_key', 'private_key_sealed']).executeTakeFirst(),

    /** Stores the first key pair made; a pair another node stored first wins (read it back). */
    insertVapidKeys: (publicKey: string, privateKeySealed: string) =>
      db
        .insertInto('notification_vapid_keys')
        .values({ public_key: publicKey, private_key_sealed: privateKeySealed })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute(),
  };
}
