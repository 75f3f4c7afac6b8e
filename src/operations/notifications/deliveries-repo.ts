import type { Kysely } from 'kysely';
import type { Schema } from '../../platform/db/schema/index.js';
import type { NotificationDeliveryStatus } from '../../platform/db/schema/operations.js';

const DELIVERY_COLUMNS = [
  'id',
  'event_id',
  'channel_id',
  'rule_id',
  'user_id',
  'payload',
  'status',
  'attempts',
  'next_attempt_at',
  'give_up_at',
  'last_status',
  'last_error',
  'sent_at',
  'created_at',
  'updated_at',
] as const;

export interface NewDelivery {
  event_id: string;
  channel_id: string;
  rule_id: string;
  user_id: string;
  payload: object;
  next_attempt_at: Date;
  give_up_at: Date;
}

export interface DeliveryFilter {
  status?: NotificationDeliveryStatus;
  channel_id?: string;
  event_id?: string;
}

export type DeliveryRow = Awaited<ReturnType<ReturnType<typeof createDeliveriesRepo>['claim']>>[number];

/** What became of one attempt, written only while the row is still this attempt's (status sending, its count). */
export interface AttemptOutcome {
  status: NotificationDeliveryStatus;
  next_attempt_at?: Date;
  last_status: number | null;
  last_error: string | null;
  sent_at?: Date;
}

export function createDeliveriesRepo(db: Kysely<Schema>) {
  return {
    /** The enabled channels among these ids, locked against deletion until the caller's transaction ends. */
    enabledChannels: (trx: Kysely<Schema>, ids: string[]) =>
      trx
        .selectFrom('notification_channels')
        .select(['id', 'user_id'])
        .where('id', 'in', ids)
        .where('enabled', '=', true)
        .forKeyShare()
        .execute(),

    async insert(trx: Kysely<Schema>, rows: NewDelivery[]): Promise<number> {
      const inserted = await trx
        .insertInto('notification_deliveries')
        .values(rows.map(({ payload, ...row }) => ({ ...row, payload: JSON.stringify(payload) })))
        .onConflict((oc) => oc.columns(['event_id', 'channel_id']).doNothing())
        .returning('id')
        .execute();
      return inserted.length;
    },

    /**
     * Claims up to `limit` due deliveries (pending and due, or sending with an ended lease), skipping rows another
     * node holds: each is marked sending, its attempt counted, its lease ending at `leaseUntil`.
     */
    claim: (now: Date, leaseUntil: Date, limit: number) =>
      db.transaction().execute(async (trx) => {
        const due = await trx
          .selectFrom('notification_deliveries')
          .select('id')
          .where('status', 'in', ['pending', 'sending'])
          .where('next_attempt_at', '<=', now)
          .orderBy('next_attempt_at')
          .limit(limit)
          .forUpdate()
          .skipLocked()
          .execute();
        if (due.length === 0) return [];
        return trx
          .updateTable('notification_deliveries')
          .set((eb) => ({
            status: 'sending',
            attempts: eb('attempts', '+', 1),
            next_attempt_at: leaseUntil,
            updated_at: new Date(),
          }))
          .where(
            'id',
            'in',
            due.map((row) => row.id),
          )
          .returning(DELIVERY_COLUMNS)
          .execute();
      }),

    /** Records an attempt's outcome; false when the row is no longer this attempt's (its lease ended, another took it). */
    async record(id: string, attempts: number, outcome: AttemptOutcome): Promise<boolean> {
      const result = await db
        .updateTable('notification_deliveries')
        .set({ ...outcome, updated_at: new Date() })
        .where('id', '=', id)
        .where('status', '=', 'sending')
        .where('attempts', '=', attempts)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    async page(userId: string, filter: DeliveryFilter, limit: number, offset: number) {
      const base = db
        .selectFrom('notification_deliveries')
        .where('user_id', '=', userId)
        .$if(filter.status !== undefined, (query) => query.where('status', '=', filter.status!))
        .$if(filter.channel_id !== undefined, (query) => query.where('channel_id', '=', filter.channel_id!))
        .$if(filter.event_id !== undefined, (query) => query.where('event_id', '=', filter.event_id!));
      const [rows, count] = await Promise.all([
        base
          .select(DELIVERY_COLUMNS)
          .orderBy('created_at', 'desc')
          .orderBy('id', 'desc')
          .limit(limit)
          .offset(offset)
          .execute(),
        base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return { rows, total: Number(count.n) };
    },
  };
}
