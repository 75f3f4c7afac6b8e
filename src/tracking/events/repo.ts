import { inSlices } from '../../platform/db/slices.js';
import type { Kysely, SelectQueryBuilder } from 'kysely';
import type { Schema } from '../../platform/db/schema/index.js';
import { cappedCount } from '../../platform/db/count.js';
import type { PageStart } from '../../platform/db/page.js';
import type { EventType } from '../../platform/db/schema/tracking.js';

export const EVENT_COLUMNS = [
  'id',
  'type',
  'device_id',
  'geofence_id',
  'geofence_owner_id',
  'occurred_at',
  'source',
  'latitude',
  'longitude',
  'details',
  'created_at',
] as const;

export interface NewEvent {
  type: EventType;
  device_id: string;
  geofence_id: string | null;
  geofence_owner_id: string | null;
  subject: string;
  occurred_at: Date;
  source: 'server' | 'device';
  latitude: number | null;
  longitude: number | null;
  details: Record<string, unknown>;
}

export interface PresenceRow {
  device_id: string;
  geofence_id: string;
  inside: boolean;
  since: Date;
  last_point_at: Date;
  dwell_fired: boolean;
}

export interface EventFilter {
  device_id?: string;
  geofence_id?: string;
  type?: EventType;
  from?: Date;
  to?: Date;
  /**
   * Only these devices' events, each group's from its time on (null: all of them): a grantee reads a device's events
   * as far back as its points (undefined: every device's, all of them).
   */
  windows?: readonly EventWindow[];
  /**
   * Only events of geofences these users own, or of none or an instance-wide one (undefined: every event): a
   * user's geofence is read by them and by those they share a device with at level full.
   */
  geofenceOwners?: readonly string[];
}

export interface EventWindow {
  since: Date | null;
  devices: readonly string[];
}

function filtered<O>(query: SelectQueryBuilder<Schema, 'events', O>, filter: EventFilter) {
  return query
    .$if(filter.windows !== undefined, (q) =>
      q.where((eb) =>
        eb.or(
          filter.windows!.map(({ since, devices }) =>
            since === null
              ? eb('device_id', 'in', devices)
              : eb.and([eb('device_id', 'in', devices), eb('occurred_at', '>=', since)]),
          ),
        ),
      ),
    )
    .$if(filter.geofenceOwners !== undefined, (q) =>
      q.where((eb) =>
        eb.or([eb('geofence_owner_id', 'is', null), eb('geofence_owner_id', 'in', filter.geofenceOwners!)]),
      ),
    )
    .$if(filter.device_id !== undefined, (q) => q.where('device_id', '=', filter.device_id!))
    .$if(filter.geofence_id !== undefined, (q) => q.where('geofence_id', '=', filter.geofence_id!))
    .$if(filter.type !== undefined, (q) => q.where('type', '=', filter.type!))
    .$if(filter.from !== undefined, (q) => q.where('occurred_at', '>=', filter.from!))
    .$if(filter.to !== undefined, (q) => q.where('occurred_at', '<=', filter.to!));
}

export function createEventsRepo(db: Kysely<Schema>) {
  return {
    /** Newest first (time, then id), one row past the limit read to tell whether more follow; the total capped. */
    async page(filter: EventFilter, limit: number, start: PageStart) {
      const base = filtered(db.selectFrom('events').select(EVENT_COLUMNS), filter);
      const rows = await (
        'after' in start
          ? base
              .where('occurred_at', '<=', start.after.at)
              .where((eb) => eb(eb.refTuple('occurred_at', 'id'), '<', eb.tuple(start.after.at, start.after.id)))
          : base.offset(start.offset)
      )
        .orderBy('occurred_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit + 1)
        .execute();
      const counted = await cappedCount(db, filtered(db.selectFrom('events').select('id'), filter));
      return { rows: rows.slice(0, limit), more: rows.length > limit, ...counted };
    },

    get: (id: string) => db.selectFrom('events').select(EVENT_COLUMNS).where('id', '=', id).executeTakeFirst(),

    /** Events that happened before `before` go (the retention job), at most `limit` a call. */
    async purgeBefore(before: Date, limit: number): Promise<number> {
      const result = await db
        .deleteFrom('events')
        .where('id', 'in', (eb) => eb.selectFrom('events').select('id').where('occurred_at', '<', before).limit(limit))
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    /**
     * Locks the devices' evaluation rows (made when missing), in the order of their ids so two batches never wait
     * on each other crosswise, and answers the time of each device's newest evaluated point.
     */
    async lockDevices(trx: Kysely<Schema>, deviceIds: readonly string[]): Promise<Map<string, Date | null>> {
      const rows = await trx
        .insertInto('event_device_state')
        .values([...deviceIds].sort().map((device_id) => ({ device_id, last_point_at: null })))
        .onConflict((oc) => oc.column('device_id').doUpdateSet((eb) => ({ device_id: eb.ref('excluded.device_id') })))
        .returning(['device_id', 'last_point_at'])
        .execute();
      return new Map(rows.map((row) => [row.device_id, row.last_point_at]));
    },

    /** The rows of these devices inside a geofence (read after their lock: the latest committed). */
    presenceOf: (trx: Kysely<Schema>, deviceIds: readonly string[]): Promise<PresenceRow[]> =>
      trx
        .selectFrom('geofence_presence')
        .select(['device_id', 'geofence_id', 'inside', 'since', 'last_point_at', 'dwell_fired'])
        .where('device_id', 'in', deviceIds)
        // Rows of geofences left are kept (an upsert makes them inside again) but not read: no row is outside.
        .where('inside', '=', true)
        .execute(),

    /** New events; one already there (the same transition, recorded by another node) is not stored twice. */
    // A batch of 10,000 points can make thousands of events and presence rows: each insert goes in slices below
    // PostgreSQL's parameter limit (the columns counted are those each row binds).
    insert: (trx: Kysely<Schema>, events: readonly NewEvent[]) =>
      inSlices(events, 10, (slice) =>
        trx
          .insertInto('events')
          .values(slice.map((event) => ({ ...event, details: JSON.stringify(event.details) })))
          .onConflict((oc) => oc.constraint('events_transition').doNothing())
          .returning(EVENT_COLUMNS)
          .execute(),
      ),

    savePresence: (trx: Kysely<Schema>, rows: readonly PresenceRow[]) =>
      inSlices(rows, 6, (slice) =>
        trx
          .insertInto('geofence_presence')
          .values(slice)
          .onConflict((oc) =>
            oc.columns(['device_id', 'geofence_id']).doUpdateSet((eb) => ({
              inside: eb.ref('excluded.inside'),
              since: eb.ref('excluded.since'),
              last_point_at: eb.ref('excluded.last_point_at'),
              dwell_fired: eb.ref('excluded.dwell_fired'),
            })),
          )
          .execute(),
      ),

    saveDeviceTimes: (trx: Kysely<Schema>, times: readonly { device_id: string; last_point_at: Date }[]) =>
      inSlices(times, 2, (slice) =>
        trx
          .insertInto('event_device_state')
          .values(slice)
          .onConflict((oc) =>
            oc.column('device_id').doUpdateSet((eb) => ({ last_point_at: eb.ref('excluded.last_point_at') })),
          )
          .execute(),
      ),

    /** Outside any transaction: a device-reported event (on conflict, as above). */
    insertOne: (event: NewEvent) =>
      db
        .insertInto('events')
        .values({ ...event, details: JSON.stringify(event.details) })
        .onConflict((oc) => oc.constraint('events_transition').doNothing())
        .returning(EVENT_COLUMNS)
        .execute(),
  };
}

export type EventRow = Awaited<ReturnType<ReturnType<typeof createEventsRepo>['insertOne']>>[number];
