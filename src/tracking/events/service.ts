import Flatbush from 'flatbush';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Schema } from '../../platform/db/schema/index.js';
import type { Clock } from '../../platform/clock.js';
import type { DomainEventBus } from '../../platform/events.js';
import type { DeviceAccess } from '../sharing/index.js';
import type { SharingService } from '../sharing/service.js';
import type { GeofencesService } from '../geofences/service.js';
import { boundsOf, shapeOf, signedDistanceM, type Shape } from '../geofences/index.js';
import type { DeviceTransition, NewPointRow, PointEvaluation, PointObserver } from '../gps/service.js';
import type { PageStart } from '../../platform/db/page.js';
import type { TrackingScope } from '../sharing/index.js';
import {
  createEventsRepo,
  type EventFilter,
  type EventRow,
  type EventWindow,
  type NewEvent,
  type PresenceRow,
} from './repo.js';
import { EventErrors } from './errors.js';

/** The index is read again this often even when no change was heard (a lost pub/sub message heals). */
const INDEX_MAX_AGE_MS = 5 * 60_000;

interface Fence {
  id: string;
  name: string;
  /** null: instance-wide, applies to every device; else to the devices its owner may see. */
  owner_id: string | null;
  shape: Shape;
  /** null: no dwell events. */
  dwellMs: number | null;
}

interface Plan {
  /** Per point, the positions in the index of the geofences that apply to its device and whose box holds it. */
  candidates: Map<NewPointRow, number[]>;
}

interface GeofenceIndex {
  fences: Fence[];
  byId: Map<string, Fence>;
  /** Bounding boxes of `fences`, by their position (null when there are none). */
  tree: Flatbush | null;
  loadedAt: number;
}

/**
 * Who writes what new events set off in their transaction (the notification outbox, registered at start-up with
 * `useDeliveries`): `prepare` before the transaction reads what it needs for events of these devices; `write` in it.
 */
export interface EventDeliveries {
  prepare(
    deviceIds: readonly string[],
  ): Promise<{ write(trx: Kysely<Schema>, events: readonly EventRow[]): Promise<number> } | undefined>;
}

/**
 * Events (docs/events.md): geofence transitions evaluated as points arrive, inside the insert's transaction
 * (the GPS point writer asks this module through its `PointObserver` hook), and those a tracker app reports
 * itself (OwnTracks `transition`). Stored once each: a transition is unique by device, type, subject (the
 * geofence) and time, so the same batch evaluated on two nodes at once stores one event; told after the commit
 * on the domain event bus as `event.recorded`, by the node that stored it.
 *
 * Which geofences apply to a device: an instance-wide one (owner null) to every device; a user's to the
 * devices that user may see (own or shared with them), from the sharing module's cached grants. The active
 * geofences live in memory per node (a Flatbush index of their bounding boxes), read again when any node
 * changes a geofence.
 */
export function createEventsService(deps: {
  db: Kysely<Schema>;
  clock: Clock;
  log: FastifyBaseLogger;
  events: Pick<DomainEventBus, 'emit'>;
  geofences: Pick<GeofencesService, 'active' | 'onChanged' | 'existing'>;
  sharing: Pick<SharingService, 'accessOf'>;
}) {
  const repo = createEventsRepo(deps.db);
  let deliveries: EventDeliveries | undefined;
  let index: Promise<GeofenceIndex> | undefined;
  deps.geofences.onChanged(() => {
    index = undefined;
  });

  async function loadIndex(): Promise<GeofenceIndex> {
    const loadedAt = deps.clock.nowMs();
    const rows = await deps.geofences.active();
    const fences = rows.map((row): Fence => ({
      id: row.id,
      name: row.name,
      owner_id: row.owner_id,
      shape: shapeOf(row),
      dwellMs: row.dwell_minutes === null ? null : row.dwell_minutes * 60_000,
    }));
    let tree: Flatbush | null = null;
    if (fences.length > 0) {
      tree = new Flatbush(fences.length);
      for (const fence of fences) tree.add(...boundsOf(fence.shape));
      tree.finish();
    }
    return { fences, byId: new Map(fences.map((fence) => [fence.id, fence])), tree, loadedAt };
  }

  /** The index of this node: built on first use, again after a change on any node or when it is old. */
  async function currentIndex(): Promise<GeofenceIndex> {
    const held = index && (await index.catch(() => undefined));
    if (held && deps.clock.nowMs() - held.loadedAt < INDEX_MAX_AGE_MS) return held;
    const loading = loadIndex();
    index = loading;
    loading.catch(() => {
      if (index === loading) index = undefined;
    });
    return loading;
  }

  /** What each owner of these fences may see now (cached by the sharing module). */
  async function accessOfOwners(owners: Set<string>): Promise<Map<string, DeviceAccess>> {
    const list = [...owners];
    const access = await Promise.all(list.map((owner) => deps.sharing.accessOf(owner)));
    return new Map(list.map((owner, i) => [owner, access[i]!]));
  }

  /**
   * Read before the insert's transaction (the grants may need the database, which the embedded back end's one
   * connection cannot serve while the transaction holds it): per point, the geofences whose bounding box holds it
   * and that apply to its device (instance-wide ones, and those of users who may see it).
   */
  async function planFor(tree: GeofenceIndex, rows: readonly NewPointRow[]): Promise<Plan> {
    const evaluated = rows.filter((row) => row.device_id !== null && row.import_id === null);
    const candidates = new Map<NewPointRow, number[]>();
    if (!tree.tree || evaluated.length === 0) return { candidates };
    const boxes = tree.tree;
    const search = (row: NewPointRow, keep: (i: number) => boolean) =>
      boxes.search(row.longitude, row.latitude, row.longitude, row.latitude, keep);
    // Two passes, keeping no list of geofences that do not apply: first whose boxes hold the points, then only
    // those that apply to each point's device (another user's geofence over the same town costs a visit, no more).
    const owners = new Set<string>();
    for (const row of evaluated)
      search(row, (i) => {
        const owner = tree.fences[i]!.owner_id;
        if (owner !== null) owners.add(owner);
        return false;
      });
    const access = owners.size > 0 ? await accessOfOwners(owners) : new Map<string, DeviceAccess>();
    for (const row of evaluated) {
      const found = search(row, (i) => applies(tree.fences[i]!, row.device_id!, access));
      if (found.length > 0) candidates.set(row, found);
    }
    return { candidates };
  }

  const applies = (fence: Fence, deviceId: string, access: Map<string, DeviceAccess>) =>
    fence.owner_id === null || access.get(fence.owner_id)?.level(deviceId) !== undefined;

  /**
   * The transitions of these new points (stored now, not before): per device in time order, a point not newer
   * than the device's newest evaluated one changing nothing; inside only by more than its accuracy, outside
   * only by more than it (hysteresis; no accuracy: exact). Answers the events stored (not those already there).
   */
  async function evaluate(trx: Kysely<Schema>, tree: GeofenceIndex, points: readonly NewPointRow[], plan: Plan) {
    const { candidates } = plan;
    const byDevice = new Map<string, NewPointRow[]>();
    for (const point of points) {
      if (point.device_id === null || point.import_id !== null) continue;
      const list = byDevice.get(point.device_id);
      if (list) list.push(point);
      else byDevice.set(point.device_id, [point]);
    }
    if (byDevice.size === 0) return [];
    const deviceIds = [...byDevice.keys()];
    const lastAt = await repo.lockDevices(trx, deviceIds);
    const presence = new Map<string, Map<string, PresenceRow>>();
    for (const row of await repo.presenceOf(trx, deviceIds)) {
      const ofDevice = presence.get(row.device_id) ?? presence.set(row.device_id, new Map()).get(row.device_id)!;
      ofDevice.set(row.geofence_id, row);
    }

    const events: NewEvent[] = [];
    const changed = new Set<PresenceRow>();
    const times: { device_id: string; last_point_at: Date }[] = [];
    for (const [deviceId, list] of byDevice) {
      if (list.length > 1) list.sort((a, b) => a.timestamp.getTime() - b.timestamp.getTime());
      const before = lastAt.get(deviceId) ?? null;
      let last = before;
      const ofDevice = presence.get(deviceId) ?? presence.set(deviceId, new Map()).get(deviceId)!;
      for (const point of list) {
        // A late point (not newer than one evaluated before) changes nothing and fires nothing.
        if (last !== null && point.timestamp.getTime() <= last.getTime()) continue;
        last = point.timestamp;
        const accuracy = point.accuracy ?? 0;
        const step = (fence: Fence, row: PresenceRow | undefined) => {
          const distance = signedDistanceM(fence.shape, point.latitude, point.longitude);
          const event = (type: NewEvent['type']) =>
            events.push({
              type,
              device_id: deviceId,
              geofence_id: fence.id,
              geofence_owner_id: fence.owner_id,
              subject: fence.id,
              occurred_at: point.timestamp,
              source: 'server',
              latitude: point.latitude,
              longitude: point.longitude,
              details: { geofence_name: fence.name, point_id: point.id, accuracy: point.accuracy },
            });
          if (!row?.inside && distance < -accuracy) {
            if (row) Object.assign(row, { inside: true, since: point.timestamp, dwell_fired: false });
            else {
              row = {
                device_id: deviceId,
                geofence_id: fence.id,
                inside: true,
                since: point.timestamp,
                last_point_at: point.timestamp,
                dwell_fired: false,
              };
              ofDevice.set(fence.id, row);
            }
            row.last_point_at = point.timestamp;
            changed.add(row);
            event('geofence_enter');
          } else if (row?.inside && distance > accuracy) {
            Object.assign(row, { inside: false, since: point.timestamp, dwell_fired: false });
            row.last_point_at = point.timestamp;
            changed.add(row);
            event('geofence_exit');
          }
          if (row?.inside && fence.dwellMs !== null && !row.dwell_fired) {
            if (row.since.getTime() + fence.dwellMs <= point.timestamp.getTime()) {
              row.dwell_fired = true;
              row.last_point_at = point.timestamp;
              changed.add(row);
              event('geofence_dwell');
            }
          }
        };
        // Where the device is inside now (it may leave), then the geofences whose box holds the point (it may enter).
        const insideNow: PresenceRow[] = [];
        for (const row of ofDevice.values()) if (row.inside) insideNow.push(row);
        for (const row of insideNow) {
          const fence = tree.byId.get(row.geofence_id);
          // A geofence made inactive: left as it is, firing nothing. One the device entered is left whether or not
          // its owner still sees the device (readers of events see only the devices they may see).
          if (fence) step(fence, row);
        }
        for (const i of candidates.get(point) ?? []) {
          const fence = tree.fences[i]!;
          const row = ofDevice.get(fence.id);
          // (The candidates are those that apply to the device: planFor kept no other.)
          if (row?.inside) continue;
          step(fence, row);
        }
      }
      if (last !== null && last !== before) times.push({ device_id: deviceId, last_point_at: last });
    }
    if (times.length > 0) await repo.saveDeviceTimes(trx, times);
    const { presence: kept, events: found } = await withoutDeleted(trx, [...changed], events);
    if (kept.length > 0) await repo.savePresence(trx, kept);
    return found.length > 0 ? repo.insert(trx, found) : [];
  }

  /**
   * The presence rows and events of geofences that still exist, locked against deletion until the commit: the index
   * may hold one deleted since it was read (on any node), whose rows would fail the whole batch's insert.
   */
  async function withoutDeleted(trx: Kysely<Schema>, presence: PresenceRow[], events: NewEvent[]) {
    const ids = new Set<string>();
    for (const row of presence) ids.add(row.geofence_id);
    for (const event of events) if (event.geofence_id) ids.add(event.geofence_id);
    if (ids.size === 0) return { presence, events };
    const existing = await deps.geofences.existing(trx, [...ids]);
    if (existing.size === ids.size) return { presence, events };
    return {
      presence: presence.filter((row) => existing.has(row.geofence_id)),
      events: events.filter((event) => event.geofence_id === null || existing.has(event.geofence_id)),
    };
  }

  async function told(events: EventRow[]): Promise<void> {
    if (events.length === 0) return;
    try {
      await deps.events.emit('event.recorded', { events });
    } catch (err) {
      deps.log.warn({ err }, 'a reaction to new events failed');
    }
  }

  const observer: PointObserver = {
    async plan(rows) {
      let evaluated = false;
      for (const row of rows)
        if (row.device_id !== null && row.import_id === null) {
          evaluated = true;
          break;
        }
      if (!evaluated) return undefined;
      const current = await currentIndex();
      if (current.fences.length === 0) return undefined;
      const plan = await planFor(current, rows);
      const writer = await deliveries?.prepare([
        ...new Set(rows.flatMap((row) => (row.device_id !== null && row.import_id === null ? [row.device_id] : []))),
      ]);
      let stored: EventRow[] = [];
      const evaluation: PointEvaluation = {
        run: async (trx, points) => {
          stored = await evaluate(trx, current, points, plan);
          if (writer && stored.length > 0) await writer.write(trx, stored);
        },
        committed: () => told(stored),
      };
      return evaluation;
    },
  };

  /**
   * Whose geofences' events the scope reads besides instance-wide ones: a user's geofence is theirs and their full
   * grantees' to read (as GET /v1/geofences shows it), though its events are stored on devices others see too.
   */
  const geofenceReaders = (scope: TrackingScope) =>
    scope.all ? undefined : [scope.userId, ...scope.access.sharersAtLeast('full')];

  /**
   * The devices a scope's events are of, grouped by the time from which they may be read: as far back as the
   * device's points (a history share of 7 days reads a week of events; a live share none stored, only new ones on
   * the WebSocket). Undefined: every device, every event. A few groups at most: one per distinct history length.
   */
  function windowsOf(scope: TrackingScope): EventWindow[] | undefined {
    if (scope.all) return undefined;
    const groups = new Map<number | null, string[]>();
    for (const deviceId of scope.access.deviceIds()) {
      const since = scope.access.pointsSince(deviceId);
      if (since === undefined) continue;
      const group = groups.get(since);
      if (group) group.push(deviceId);
      else groups.set(since, [deviceId]);
    }
    return [...groups].map(([since, devices]) => ({ since: since === null ? null : new Date(since), devices }));
  }

  return {
    /** Events of the devices the scope may see, newest first (docs/events.md, "Reading events"). */
    async page(
      scope: TrackingScope,
      filter: Omit<EventFilter, 'windows' | 'geofenceOwners'>,
      limit: number,
      start: PageStart,
    ) {
      const windows = windowsOf(scope);
      if (windows?.length === 0) return { rows: [], more: false, total: 0, estimated: false };
      return repo.page({ ...filter, windows, geofenceOwners: geofenceReaders(scope) }, limit, start);
    },

    async get(scope: TrackingScope, id: string) {
      const event = await repo.get(id);
      const readers = geofenceReaders(scope);
      const seen =
        event &&
        (scope.all ||
          (scope.access.seesPoint(event.device_id, event.occurred_at.getTime()) &&
            (event.geofence_owner_id === null || readers!.includes(event.geofence_owner_id))));
      if (!seen) throw EventErrors.not_found();
      return event;
    },

    /** The retention job: events older than `before` go, in rounds of 10,000; answers how many went. */
    async purgeBefore(before: Date): Promise<number> {
      let removed = 0;
      for (;;) {
        const n = await repo.purgeBefore(before, 10_000);
        removed += n;
        if (n < 10_000) return removed;
      }
    },

    /** Registered with the GPS service at start-up (`gps.usePointObserver`). */
    pointObserver: observer,

    /**
     * A transition the device reported itself (OwnTracks `transition`, source 'device'): of the geofence of that
     * name the device's geofences hold (instance-wide or its owners'; the first made, when several share it), else
     * with geofence null and the region's name in the details. Stored once (a resent message stores nothing).
     */
    async recordDeviceTransition(deviceId: string, transition: DeviceTransition): Promise<void> {
      const current = await currentIndex();
      const named = current.fences.filter((fence) => fence.name === transition.region);
      const owners = new Set(named.flatMap((fence) => (fence.owner_id ? [fence.owner_id] : [])));
      const access = owners.size > 0 ? await accessOfOwners(owners) : new Map<string, DeviceAccess>();
      // The phone's region is its owner's: matched among the device owner's geofences and instance-wide ones, never
      // a grantee's of the same name (which would show the owner's event under another user's private geofence).
      const fence = named.find(
        (candidate) => candidate.owner_id === null || access.get(candidate.owner_id)?.level(deviceId) === 'owner',
      );
      const writer = await deliveries?.prepare([deviceId]);
      const event: NewEvent = {
        type: transition.event === 'enter' ? 'geofence_enter' : 'geofence_exit',
        device_id: deviceId,
        geofence_id: fence?.id ?? null,
        geofence_owner_id: fence?.owner_id ?? null,
        subject: `device:${fence?.id ?? transition.region}`,
        occurred_at: transition.timestamp,
        source: 'device',
        latitude: transition.latitude,
        longitude: transition.longitude,
        details: {
          geofence_name: fence?.name ?? transition.region,
          accuracy: transition.accuracy,
          message: transition.message,
        },
      };
      const events = await deps.db.transaction().execute(async (trx) => {
        const stored = await createEventsRepo(trx).insertOne(event);
        if (writer && stored.length > 0) await writer.write(trx, stored);
        return stored;
      });
      await told(events);
    },

    /** Registered at start-up: the notification outbox writes the deliveries of new events in their transaction. */
    useDeliveries(hook: EventDeliveries): void {
      deliveries = hook;
    },
  };
}

export type EventsService = ReturnType<typeof createEventsService>;
