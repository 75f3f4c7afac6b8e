import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Static } from 'typebox';
import type { Caller } from '../../platform/auth/caller.js';
import type { PageStart, RowKey } from '../../platform/db/page.js';
import type { Schema } from '../../platform/db/schema/index.js';
import type { DomainEventBus, TransactionalEvent } from '../../platform/events.js';
import type { KeyValueStore } from '../../platform/kv/index.js';
import type { CacheStats } from '../../platform/kv/cache.js';
import { logAtMostEvery } from '../../platform/log-throttle.js';
import type { DevicesService } from '../devices/service.js';
import { pointWindows, type DeviceAccess, type TrackingScope } from '../sharing/index.js';
import type { Friend } from './owntracks-friends.js';

/** At most this many friends in one OwnTracks answer (the app draws each on its map). */
const MAX_FRIENDS = 100;

type OwnScope = Exclude<TrackingScope, { all: true }>;
import { createTrackReader, fitZoom, MAX_UNTHINNED_TRACK_POINTS, type TrackRange } from './track.js';
import { compileItemCheck } from '../../platform/http/validation.js';
import { createGpsRepo, type ImportedPoints } from './repo.js';
import { GpsErrors } from './errors.js';
import {
  createPointWriter,
  newRow,
  type LoggingTripOf,
  type NewRow,
  type PointEvaluation,
  type PointObserver,
  type PointFields,
  type PointToWrite,
  type WrittenPoint,
} from './point-writer.js';
import { CreateGpsPointBody } from './schemas.js';

export { MAX_TRACK_POINTS, MAX_TRACK_ZOOM } from './track.js';

/** The latest-point cache TTL when system config gps.latest_cache_ttl_secs cannot be read. */
export const LATEST_CACHE_TTL_SECS = 300;
const NO_POINT = 'none';
/** Latest points kept parsed in memory; beyond this many keys the memo starts over. */
const PARSED_LATEST_MAX = 20_000;
/** Devices whose latest points the cache misses that are each read alone; more are read in one query. */
const MISSES_ONE_BY_ONE = 16;

/** A new point as POST /v1/gps takes it (its route schema is the one source of the type). */
export type GpsPointInput = Static<typeof CreateGpsPointBody>;

type GpsPoint = NonNullable<Awaited<ReturnType<ReturnType<typeof createGpsRepo>['get']>>>;

export type { PointFields };

/** The most points one batch may hold (POST /v1/gps/batch; an import writes larger files a batch at a time). */
export const MAX_BATCH_POINTS = 10_000;

/** A point of a batch that was not stored: its place in the batch, the field at fault (empty: the point itself) and why. */
export interface RefusedPoint {
  index: number;
  field: string;
  message: string;
}

export interface BatchOutcome {
  /** Points stored by this batch. */
  stored: number;
  /** Points that were stored already (same device, time and position): sent before, kept once. */
  duplicates: number;
  refused: RefusedPoint[];
}

const checkPoint = compileItemCheck(CreateGpsPointBody);

/** An item of a batch that could not even be read (an NDJSON line that is not JSON): refused with its message. */
export class UnreadableItem {
  constructor(readonly message: string) {}
}

// v2: points without a device leave device_id out. A new name, so nodes of the previous version
// sharing Redis during a rolling deploy never read entries of the other shape.
const latestKey = (deviceId?: string) => (deviceId ? `gps:latest:v2:device:${deviceId}` : 'gps:latest:v2:all');

/**
 * GPS points. The latest point overall and per device is served from the
 * key-value cache (gps.latest_cache_ttl_secs, 5 minutes) and written through on every new point, so the
 * hot read never reaches the database and a new point is visible at once; the
 * cache keeps the newest by timestamp (`keepNewest`), whatever order points arrive in.
 */
interface Deps {
  db: Kysely<Schema>;
  kv: KeyValueStore;
  devices: Pick<DevicesService, 'byIds' | 'deviceOfKey' | 'ids'>;
  log: FastifyBaseLogger;
  events: Pick<DomainEventBus, 'emit'>;
  /** How long a latest point stays cached (system config gps.latest_cache_ttl_secs; 300). */
  latestCacheTtlSecs: () => Promise<number>;
  /** Batches of single points committing at once: several on PostgreSQL, 1 on the embedded database (one connection). */
  commitConcurrency: number;
}

export type { LoggingTripOf, PointObserver, PointEvaluation, NewRow as NewPointRow };

/** A geofence transition a tracker app reports itself (OwnTracks `transition`). */
export interface DeviceTransition {
  event: 'enter' | 'leave';
  /** The app's name of the region. */
  region: string;
  timestamp: Date;
  latitude: number | null;
  longitude: number | null;
  accuracy: number | null;
  /** The message as sent (kept in the event's details). */
  message: Record<string, unknown>;
}
export type TransitionRecorder = (deviceId: string, transition: DeviceTransition) => Promise<void>;

export function createGpsService(deps: Deps) {
  const repo = createGpsRepo(deps.db);
  const tracks = createTrackReader(deps.db);
  // Until the trips module registers its query, points join no trip.
  let loggingTripOf: LoggingTripOf | undefined;
  // Until the events module registers itself, new points are evaluated by nothing.
  let pointObserver: PointObserver | undefined;
  let transitionRecorder: TransitionRecorder | undefined;
  const writer = createPointWriter({
    repo,
    db: deps.db,
    devices: deps.devices,
    loggingTripOf: () => loggingTripOf,
    observer: () => pointObserver,
    afterCommit: published,
    afterCommitFailed: (err) =>
      deps.log.warn({ err }, 'could not finish a committed batch of GPS points (the latest-point cache may lag)'),
    concurrency: deps.commitConcurrency,
  });
  const parsedLatest = new Map<string, { raw: string; point: GpsPoint }>();

  /**
   * The cache holds JSON; parsing it again on every read of an unchanged point is most of the hot
   * read's own work, so the last parse per key is kept and reused while the cached text is the same.
   * The shared object is frozen: no caller may change it.
   */
  function parseLatest(key: string, raw: string): GpsPoint {
    const memo = parsedLatest.get(key);
    if (memo?.raw === raw) return memo.point;
    const point = Object.freeze(JSON.parse(raw) as GpsPoint);
    if (parsedLatest.size >= PARSED_LATEST_MAX) parsedLatest.clear();
    parsedLatest.set(key, { raw, point });
    return point;
  }

  async function cached<T>(operation: () => Promise<T>): Promise<T | undefined> {
    try {
      return await operation();
    } catch (err) {
      cacheFailed(err);
      return undefined;
    }
  }

  const logCacheFailure = logAtMostEvery();
  function cacheFailed(err: unknown): void {
    logCacheFailure(deps.log, 'warn', { err }, 'latest-point cache unavailable');
  }
  /** Latest-point reads by where the answer came from (for the metrics; this cache has no local layer). */
  const latestStats: CacheStats = { local: 0, shared: 0, loaded: 0 };

  /** The configured TTL; the default when it cannot be read (the point is stored by then: no 500). */
  function cacheTtl(): Promise<number> {
    return deps.latestCacheTtlSecs().catch((err: unknown) => {
      deps.log.warn({ err }, 'could not read gps.latest_cache_ttl_secs; using the default');
      return LATEST_CACHE_TTL_SECS;
    });
  }

  /**
   * The newest point of one key as the database has it, cached unless a newer one got there first
   * (a point written meanwhile): every cache write compares, so concurrent writers and a reader
   * filling the cache cannot leave an older point behind.
   */
  async function loadLatest(key: string, deviceId?: string): Promise<GpsPoint | null> {
    const point = (await repo.latest(deviceId)) ?? null;
    const ttl = await cacheTtl();
    await cached(() => deps.kv.keepNewest([{ key, value: point ? JSON.stringify(point) : NO_POINT }], ttl, 'set'));
    return point;
  }

  /**
   * Every committed batch, by whatever route: the new points (not the ones resent) become the latest
   * if they are, and go to the gps channel (gps.points_recorded, one event for them all). Before the writers are answered.
   */
  async function published(committed: WrittenPoint[]): Promise<void> {
    const fresh = committed.filter((written) => !written.duplicate);
    if (fresh.length === 0) return;
    await offerNewest(fresh.map(({ point }) => point));
    try {
      // Each written point is already a { point, devicePublic } (10,000 copies fewer for a batch).
      await deps.events.emit('gps.points_recorded', { points: fresh });
    } catch (err) {
      // The points are committed: a reaction that fails is logged, not their failure.
      deps.log.warn({ err }, 'a reaction to new GPS points failed');
    }
  }

  /** A new point to write, with who sent it (none for the system key). */
  function toWrite(
    caller: Caller,
    fields: Omit<PointFields, 'timestamp'>,
    timestamp: Date,
    deviceId: string | undefined,
    keyDeviceRequired: boolean,
  ): PointToWrite {
    return {
      row: newRow(fields, timestamp, caller.isSystem ? null : caller.userId),
      deviceId,
      apiKeyId: caller.apiKeyId ?? undefined,
      keyDeviceRequired,
    };
  }

  /**
   * Points a client sent together, in one statement (one transaction) through the writer that commits every
   * point: new points stored, those already stored counted as duplicates, per point the error of one that
   * could not be (a device_id that names no device). `deviceId`: the device of every point (an import);
   * otherwise each point's own `device_id`, or the device of the caller's key. `keyDevice`: the points must
   * land on the device linked to the caller's key (a tracker app; refused with 403 when it has none).
   */
  async function storeAll(inputs: PointToWrite[], options: { keyDevice?: boolean } = {}) {
    const outcomes = inputs.length > 0 ? await writer.writeAll(inputs) : [];
    let stored = 0;
    let duplicates = 0;
    for (const outcome of outcomes) {
      if ('value' in outcome) {
        if (outcome.value.duplicate) duplicates++;
        else stored++;
      } else if (options.keyDevice) {
        // A tracker app's batch is one answer: a point not stored (its key has no device) fails all of it, never a 2xx.
        throw outcome.error;
      }
    }
    return { stored, duplicates, outcomes };
  }

  /**
   * Offers the newest point of a committed batch, overall and of each device, to the cache: one write per key
   * however many points the batch holds (equal timestamps: the later point, as `keepNewest` does), all in one
   * round trip. A key with nothing cached (expired, or its latest point deleted) is filled from the database:
   * only the database knows whether a late point is the newest.
   */
  async function offerNewest(points: GpsPoint[]): Promise<void> {
    let newestOverall: GpsPoint | undefined;
    const newestOfDevice = new Map<string, GpsPoint>();
    const newer = (point: GpsPoint, held: GpsPoint | undefined) => !held || held.timestamp <= point.timestamp;
    for (const point of points) {
      if (newer(point, newestOverall)) newestOverall = point;
      if (point.device_id && newer(point, newestOfDevice.get(point.device_id)))
        newestOfDevice.set(point.device_id, point);
    }
    // The newest point overall is also its device's newest: its text is made once.
    const texts = new Map<GpsPoint, string>();
    const textOf = (point: GpsPoint) => texts.get(point) ?? texts.set(point, JSON.stringify(point)).get(point)!;
    const offers: { key: string; value: string; deviceId?: string }[] = [...newestOfDevice].map(
      ([deviceId, point]) => ({ key: latestKey(deviceId), value: textOf(point), deviceId }),
    );
    if (newestOverall) offers.push({ key: latestKey(), value: textOf(newestOverall) });
    const outcomes = await cached(async () => deps.kv.keepNewest(offers, await cacheTtl(), 'skip'));
    await Promise.all(
      offers
        .filter((_, i) => outcomes?.[i] === 'absent')
        // The points are committed: a cache that cannot be filled from the database now is not their failure.
        .map(({ key, deviceId }) =>
          loadLatest(key, deviceId).catch((err: unknown) =>
            deps.log.warn({ err }, 'could not refresh the latest-point cache'),
          ),
        ),
    );
  }

  /**
   * Points of a device changed (one deleted, the device deleted, or a deleted trip's): its cached latest point
   * goes, and so does the latest overall, which may be one of them; the next read fills both from the database.
   */
  async function forgetLatest(deviceId: string | null | undefined): Promise<void> {
    if (deviceId) await cached(() => deps.kv.delete(latestKey(deviceId)));
    await cached(() => deps.kv.delete(latestKey()));
  }

  /** The newest point overall or of one device; null when there is none. */
  async function latest(deviceId?: string): Promise<GpsPoint | null> {
    const key = latestKey(deviceId);
    // Without `cached`: a closure and a promise fewer on the hottest read.
    let hit: string | null | undefined;
    try {
      hit = await deps.kv.get(key);
    } catch (err) {
      cacheFailed(err);
    }
    if (hit) {
      latestStats.shared++;
      return hit === NO_POINT ? null : parseLatest(key, hit);
    }
    latestStats.loaded++;
    return loadLatest(key, deviceId);
  }

  /**
   * Each device's cache key, made once: a key made anew is a new string, hashed again by every map it is looked
   * up in, and a self-service read looks up one per device of its scope.
   */
  const deviceKeys = new Map<string, string>();
  function deviceKeyOf(deviceId: string): string {
    let key = deviceKeys.get(deviceId);
    if (key === undefined) {
      if (deviceKeys.size >= PARSED_LATEST_MAX) deviceKeys.clear();
      key = latestKey(deviceId);
      deviceKeys.set(deviceId, key);
    }
    return key;
  }

  /** The keys of a list of devices, made once per list (a scope's list lives as long as its cached grants). */
  const keysOfLists = new WeakMap<readonly string[], readonly string[]>();
  function keysOf(deviceIds: readonly string[]): readonly string[] {
    let keys = keysOfLists.get(deviceIds);
    if (!keys) {
      keys = deviceIds.map(deviceKeyOf);
      keysOfLists.set(deviceIds, keys);
    }
    return keys;
  }

  /**
   * The newest point of each device, in their order (null where none): one cache read for all of them (a
   * self-service user's scope holds many devices), the database only for those the cache misses.
   */
  async function latestOfEach(deviceIds: readonly string[]): Promise<(GpsPoint | null)[]> {
    const keys = keysOf(deviceIds);
    let hits: (string | null)[] = [];
    try {
      hits = await deps.kv.getMany(keys);
    } catch (err) {
      cacheFailed(err);
    }
    const points: (GpsPoint | null)[] = [];
    const missed: number[] = [];
    keys.forEach((key, i) => {
      const hit = hits[i];
      if (hit) {
        latestStats.shared++;
        points[i] = hit === NO_POINT ? null : parseLatest(key, hit);
      } else {
        latestStats.loaded++;
        missed.push(i);
      }
    });
    // No promise per device when every one was cached (the usual case); many misses (a cold cache under a map of
    // thousands of devices) are one query, not one each.
    if (missed.length > MISSES_ONE_BY_ONE) await loadLatestOfMany(deviceIds, missed, points);
    else if (missed.length > 0)
      await Promise.all(missed.map(async (i) => void (points[i] = await loadLatest(keys[i]!, deviceIds[i]))));
    return points;
  }

  /** The newest points of the devices at these places of the list, in one query, into `points` and the cache. */
  async function loadLatestOfMany(deviceIds: readonly string[], places: number[], points: (GpsPoint | null)[]) {
    const found = new Map((await repo.latestPerDevice(places.map((i) => deviceIds[i]!))).map((p) => [p.device_id, p]));
    const offers = places.map((i) => {
      const point = found.get(deviceIds[i]!) ?? null;
      points[i] = point;
      return { key: deviceKeyOf(deviceIds[i]!), value: point ? JSON.stringify(point) : NO_POINT };
    });
    // As loadLatest: every write compares, so a point written meanwhile is not undone.
    const ttl = await cacheTtl();
    await cached(() => deps.kv.keepNewest(offers, ttl, 'set'));
  }

  /** A point the scope may read (404 for any other: a point one may not see is not there). */
  async function readable(scope: TrackingScope, id: string): Promise<GpsPoint> {
    const point = await repo.get(id);
    const seen =
      point &&
      (scope.all ||
        (typeof point.device_id === 'string' &&
          scope.access.seesPoint(point.device_id, new Date(point.timestamp).getTime())));
    if (!seen) throw GpsErrors.point_not_found();
    return point;
  }

  /**
   * The error a point written to a device in the scope would get, or undefined when it may be written: a
   * self-service user writes only to devices they own; without device_id, to the device of their key.
   */
  async function writableDevices(caller: Caller, scope: OwnScope) {
    const keyDevice = caller.apiKeyId ? await deps.devices.deviceOfKey(caller.apiKeyId) : null;
    return (deviceId: string | undefined) => {
      const target = deviceId ?? keyDevice?.id;
      if (target === undefined) return GpsErrors.device_required;
      if (!scope.access.seesLive(target)) return GpsErrors.unknown_device;
      return scope.access.level(target) === 'owner' ? undefined : GpsErrors.device_not_writable;
    };
  }

  async function assertWritable(caller: Caller, scope: OwnScope, deviceId?: string): Promise<void> {
    const refusal = (await writableDevices(caller, scope))(deviceId);
    if (refusal) throw refusal();
  }

  return {
    /** The events module evaluates every new point (see `PointObserver`); registered at start-up. */
    usePointObserver(observer: PointObserver): void {
      pointObserver = observer;
    },

    /** Who records a tracker app's own geofence transitions (OwnTracks `transition`); registered at start-up. */
    useTransitionRecorder(recorder: TransitionRecorder): void {
      transitionRecorder = recorder;
    },

    /**
     * A tracker app's own geofence transition (OwnTracks `transition`), on the device of the caller's key: recorded
     * as an event of that device when the events module is there, else dropped. A key without a device: 403.
     */
    async recordTransition(caller: Caller, scope: TrackingScope, transition: DeviceTransition): Promise<void> {
      if (!scope.all) await assertWritable(caller, scope, undefined);
      const device = caller.apiKeyId ? await deps.devices.deviceOfKey(caller.apiKeyId) : null;
      if (!device) throw GpsErrors.no_device_for_credential();
      await transitionRecorder?.(device.id, transition);
    },

    useLoggingTripOf(lookup: LoggingTripOf): void {
      loggingTripOf = lookup;
    },
    /** A page of the points the scope may read, newest first. */
    page: (scope: TrackingScope, limit: number, start: PageStart) => {
      if (scope.all) return repo.page(limit, start);
      const { whole, from } = pointWindows(scope.access);
      return repo.windowsPage(limit, start, [...whole.map((deviceId) => ({ deviceId, since: null })), ...from]);
    },
    /** A page of a trip's points by time (the trips area answers 404 for an unknown trip). */
    pointsOfTrip: repo.pointsOfTrip,
    countOfTripSince: repo.countOfTripSince,
    firstPointsOfTrips: repo.firstPointsOfTrips,

    /** Every point a user sent, in time order, a batch at a time (for streaming out). */
    async *pointsSentBy(userId: string, batchSize = 1000) {
      let after: RowKey | null = null;
      for (;;) {
        const batch = await repo.pointsSentByAfter(userId, after, batchSize);
        if (batch.length > 0) yield batch;
        if (batch.length < batchSize) break;
        const last = batch[batch.length - 1]!;
        after = { at: last.timestamp, id: last.id };
      }
    },

    /**
     * A device's track in [from, to] for drawing: how many points and their box, then the points kept at
     * `zoom` (every point without one), or at the zoom that fits the box into `view` (pixels). Null when, without
     * a zoom, the range holds more than MAX_UNTHINNED_TRACK_POINTS.
     */
    async trackOfDevice(
      deviceId: string,
      range: TrackRange,
      detail: { zoom?: number | undefined; view?: { width: number; height: number } | undefined },
    ) {
      const { total, bounds } = await tracks.extent(deviceId, range);
      const zoom =
        detail.zoom ?? (detail.view && bounds ? fitZoom(bounds, detail.view.width, detail.view.height) : null);
      // Unthinned, the answer grows with the range (a year of a 1 Hz tracker is 30 million points): refused past a
      // size a map can use, before the database builds it.
      if (zoom === null && total > MAX_UNTHINNED_TRACK_POINTS) return null;
      const { kept, json } = await tracks.columnsJson(deviceId, range, total ? zoom : null);
      return { total, bounds, zoom, kept, columnsJson: json };
    },

    /** A device's points in [from, to], in time order, a batch at a time (for streaming out). */
    async *pointsOfDevice(deviceId: string, range: { from?: Date; to?: Date }, batchSize = 1000) {
      let after: RowKey | null = null;
      for (;;) {
        const batch = await repo.pointsOfDeviceAfter(deviceId, range, after, batchSize);
        if (batch.length > 0) yield batch;
        if (batch.length < batchSize) break;
        const last = batch[batch.length - 1]!;
        after = { at: last.timestamp, id: last.id };
      }
    },
    /**
     * The points of these devices that `userId` did not send, device by device, each in time order, a batch at a
     * time (the personal data export: the points of a user's own devices beside those they sent).
     */
    async *pointsOfDevicesNotSentBy(deviceIds: readonly string[], userId: string, batchSize = 1000) {
      for (const deviceId of deviceIds) {
        let after: RowKey | null = null;
        for (;;) {
          const batch = await repo.pointsOfDeviceNotSentByAfter(deviceId, userId, after, batchSize);
          if (batch.length > 0) yield batch;
          if (batch.length < batchSize) break;
          const last = batch[batch.length - 1]!;
          after = { at: last.timestamp, id: last.id };
        }
      }
    },
    /** A user is purged: the points they sent stay (tracking data is the installation's), no longer naming them. */
    forgetSender: (userId: string, trx: Kysely<Schema>) => repo.forgetSender(userId, trx),
    count: repo.count,

    get: (scope: TrackingScope, id: string) => readable(scope, id),

    /**
     * Stores a point by group commit (point-writer.ts): resolved once committed. Without a device_id in the
     * body, a point belongs to the device linked to the calling API key; a point of a device joins that
     * device's active GPS-logging trip. The point records who sent it (`sent_by`: the user of the key or
     * session; none for the system key), which is whose data export it belongs in.
     */
    async record(caller: Caller, scope: TrackingScope, input: GpsPointInput) {
      if (!scope.all) await assertWritable(caller, scope, input.device_id);
      return (await writer.write(toWrite(caller, input, new Date(input.timestamp * 1000), input.device_id, false)))
        .point;
    },

    /**
     * One point of a tracker app (Traccar Client, OwnTracks, GPSLogger), by group commit like `record`: it
     * lands on the device linked to the caller's key (403 gps.no_device_for_credential without one). A
     * point already stored (a resend) is answered with the point stored first (`duplicate`).
     */
    async recordForKeyDevice(caller: Caller, scope: TrackingScope, fields: PointFields) {
      if (!scope.all) await assertWritable(caller, scope, undefined);
      return writer.write(toWrite(caller, fields, fields.timestamp, undefined, true));
    },

    /**
     * Points of a file import (times to the millisecond, speeds possibly unknown) onto its device, sent by the
     * importing user (`sentBy`; none for the system key), in one statement: how many were stored, and how many
     * the device had already (same time and position).
     */
    async importPoints(
      target: { deviceId: string; sentBy: string | null; importId: string },
      points: PointFields[],
    ): Promise<{ stored: number; duplicates: number }> {
      const writes = points.map((point) => {
        const row = newRow(point, point.timestamp, target.sentBy);
        // Which import stored it, so that its points can be removed again (and only those).
        row.import_id = target.importId;
        return { row, deviceId: target.deviceId, apiKeyId: undefined };
      });
      const { stored, duplicates } = await storeAll(writes);
      return { stored, duplicates };
    },

    /** Points of a tracker app sent as one batch (Overland): see `storeAll`, on the device of the caller's key. */
    async storeForKeyDevice(caller: Caller, scope: TrackingScope, points: PointFields[]) {
      if (!scope.all) await assertWritable(caller, scope, undefined);
      return storeAll(
        points.map((point) => toWrite(caller, point, point.timestamp, undefined, true)),
        { keyDevice: true },
      );
    },

    /**
     * A batch in the spec's point shape (POST /v1/gps/batch; also the import's way in, with `deviceId`), at
     * most MAX_BATCH_POINTS: each point checked as POST /v1/gps checks one, the valid ones stored in one
     * transaction, the others listed by index, field and reason. With `allOrNothing`, any refusal stores none.
     * A point already stored (same device, time and position) is counted in `duplicates` and not stored again.
     */
    async insertBatch(
      caller: Caller,
      scope: TrackingScope,
      items: readonly unknown[],
      options: { allOrNothing?: boolean; deviceId?: string } = {},
    ): Promise<BatchOutcome> {
      const writable = scope.all ? undefined : await writableDevices(caller, scope);
      const refused: RefusedPoint[] = [];
      /** The points to store, and the index in the batch of each. */
      const writes: PointToWrite[] = [];
      const indexes: number[] = [];
      for (let index = 0; index < items.length; index++) {
        const item = items[index];
        if (item instanceof UnreadableItem) {
          refused.push({ index, field: '', message: item.message });
          continue;
        }
        const problem = checkPoint(item);
        if (problem) {
          refused.push({ index, field: problem.field, message: problem.message });
          continue;
        }
        const input = item as GpsPointInput;
        const refusal = writable && writable(options.deviceId ?? input.device_id);
        if (refusal) {
          refused.push({ index, field: 'device_id', message: refusal.message });
          continue;
        }
        writes.push(
          toWrite(caller, input, new Date(input.timestamp * 1000), options.deviceId ?? input.device_id, false),
        );
        indexes.push(index);
      }
      if (options.allOrNothing && options.deviceId === undefined) {
        // Checked before anything is written: a point whose device does not exist would be refused by the insert.
        const named = [...new Set(writes.flatMap((write) => (write.deviceId === undefined ? [] : [write.deviceId])))];
        const known = new Set((await deps.devices.byIds(named)).map((device) => device.id));
        writes.forEach((write, i) => {
          if (write.deviceId !== undefined && !known.has(write.deviceId))
            refused.push({ index: indexes[i]!, field: 'device_id', message: GpsErrors.unknown_device.message });
        });
        refused.sort((a, b) => a.index - b.index);
      }
      if (options.allOrNothing && refused.length > 0) return { stored: 0, duplicates: 0, refused };
      const result = await storeAll(writes);
      result.outcomes.forEach((outcome, i) => {
        if ('error' in outcome)
          refused.push({
            index: indexes[i]!,
            field: 'device_id',
            message: outcome.error instanceof Error ? outcome.error.message : String(outcome.error),
          });
      });
      refused.sort((a, b) => a.index - b.index);
      return { stored: result.stored, duplicates: result.duplicates, refused };
    },

    /** Refuses new points (503) and waits until the points already sent are committed. */
    stop: () => writer.close(),

    latestStats,

    /** The newest point the scope may see, overall or of one device; null when there is none. */
    async latestIn(scope: TrackingScope, deviceId?: string): Promise<GpsPoint | null> {
      if (scope.all) return latest(deviceId);
      if (deviceId !== undefined) return scope.access.seesLive(deviceId) ? latest(deviceId) : null;
      let newest: GpsPoint | null = null;
      for (const point of await latestOfEach(scope.access.deviceIds()))
        if (point && (!newest || point.timestamp > newest.timestamp)) newest = point;
      return newest;
    },

    /** The latest point of every device the scope sees that has one, by device id (from the cache for a user's own). */
    async latestPerDeviceIn(scope: TrackingScope): Promise<GpsPoint[]> {
      const ids = scope.all ? await deps.devices.ids() : [...scope.access.deviceIds()];
      ids.sort();
      return (await latestOfEach(ids)).filter((point): point is GpsPoint => point !== null);
    },

    /** The newest point overall or of one device; null when there is none. */
    latest,

    /** The devices shared with a user (not their own), with names and latest points: OwnTracks' friends. */
    async friendsOf(access: DeviceAccess): Promise<Friend[]> {
      const shared = access.deviceIds().filter((id) => access.level(id) !== 'owner');
      const devices = await deps.devices.byIds(shared.slice(0, MAX_FRIENDS));
      const latestPoints = await latestOfEach(devices.map((device) => device.id));
      return devices.map((device, i) => ({ id: device.id, name: device.name, latest: latestPoints[i] ?? null }));
    },

    /** The latest point of every device that has one, by device id. */
    latestPerDevice: async () => repo.latestPerDevice(await deps.devices.ids()),

    /**
     * The points a file import stored (DELETE /v1/gps/imports/{id}/points): those of a trip stay, as
     * DELETE /v1/gps/{id} refuses to delete one; how many went and how many stay in trips. The device's cached
     * latest point, which may have been one of them, is forgotten.
     */
    async removeImported(target: ImportedPoints): Promise<{ removed: number; keptInTrips: number }> {
      const removed = await repo.deleteImported(target);
      const keptInTrips = await repo.countImported(target);
      if (removed > 0) await forgetLatest(target.deviceId);
      return { removed, keptInTrips };
    },

    /** A self-service user deletes only points of devices they own. */
    async remove(scope: TrackingScope, id: string) {
      const point = await readable(scope, id);
      if (!scope.all && scope.access.level(point.device_id!) !== 'owner') throw GpsErrors.device_not_writable();
      const outcome = await repo.deleteUnlinked(id);
      if (outcome === 'missing') throw GpsErrors.point_not_found();
      if (outcome === 'linked') throw GpsErrors.point_linked_to_trip();
      // The deleted point may have been the cached latest one.
      await forgetLatest(point.device_id);
    },

    forgetLatest,

    /**
     * trip.deleting: any device that logged to the trip (its device now, or one it had before) may have a
     * latest point cached that still names it. Those are found in the deletion's transaction, before the
     * points lose their trip, and forgotten on every node (the cache is the shared store) once it commits.
     */
    async forgetLatestOfTrip(
      tripId: string,
      trx: Kysely<Schema>,
      onCommit: TransactionalEvent['onCommit'],
    ): Promise<void> {
      const deviceIds = await repo.devicesOfTrip(trx, tripId);
      onCommit(async () => {
        await Promise.all(deviceIds.map((deviceId) => cached(() => deps.kv.delete(latestKey(deviceId)))));
        await forgetLatest(null);
      });
    },
  };
}

export type GpsService = ReturnType<typeof createGpsService>;
