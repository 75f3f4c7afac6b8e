import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Schema } from '../../platform/db/schema/index.js';
import { classifyDatabaseError } from '../../platform/db/errors.js';
import { createGroupCommit, type Outcome } from '../../platform/db/group-commit.js';
import type { DevicesService } from '../devices/service.js';
import { toGpsPoint, type createGpsRepo, type LoggingTripQuery, type NewGpsPoint, type StoredPoint } from './repo.js';
import { GpsErrors } from './errors.js';

/**
 * The query for the trip new points of a device join (its active GPS-logging trip), run inside the insert
 * with the trip row locked, so a trip completed meanwhile never gains a point. The trips module registers it
 * at start-up (trips read points through this service, so they cannot be a dependency of it).
 */
export type LoggingTripOf = LoggingTripQuery;

/**
 * A new point as the service stores it, whatever route it came in by: the spec's fields with the time as a
 * Date (to the millisecond), the optional ones left out or null.
 */
export type PointFields = Pick<
  NewGpsPoint,
  'latitude' | 'longitude' | 'timestamp' | 'speed_kmh' | 'speed_mps' | 'speed_mph' | 'speed_knots'
> &
  Partial<
    Pick<
      NewGpsPoint,
      'altitude' | 'heading' | 'pdop' | 'hdop' | 'vdop' | 'accuracy' | 'battery_level' | 'charging' | 'motion' | 'alarm'
    >
  >;

export type NewRow = NewGpsPoint & { id: string };

/**
 * What a module evaluating new points (the events module: geofence transitions) does with a batch. It registers
 * itself at start-up (it reads geofences and sharing, which GPS must not depend on), and is asked before each insert.
 */
export interface PointObserver {
  /**
   * What to evaluate of these rows in the insert's transaction; undefined: nothing (the insert runs on its own,
   * as without an observer). Called once per batch, before its insert.
   */
  plan(rows: readonly NewRow[]): Promise<PointEvaluation | undefined>;
}

export interface PointEvaluation {
  /** In the insert's transaction, after the insert: `stored` are the rows stored now (not those stored before). */
  run(trx: Kysely<Schema>, stored: readonly NewRow[]): Promise<void>;
  /** After the commit (what was found is told: pub/sub, the event bus). */
  committed(): Promise<void>;
}

/**
 * The row of a new point, made once per point (a batch makes 10,000; every copy counts): the optional fields
 * null where not given, who sent it, a new id; its device and trip are set when its batch is committed.
 */
export function newRow(fields: Omit<PointFields, 'timestamp'>, timestamp: Date, sentBy: string | null): NewRow {
  return {
    id: randomUUID(),
    device_id: null,
    trip_id: null,
    latitude: fields.latitude,
    longitude: fields.longitude,
    altitude: fields.altitude ?? null,
    heading: fields.heading ?? null,
    timestamp,
    speed_kmh: fields.speed_kmh,
    speed_mps: fields.speed_mps,
    speed_mph: fields.speed_mph,
    speed_knots: fields.speed_knots,
    pdop: fields.pdop ?? null,
    hdop: fields.hdop ?? null,
    vdop: fields.vdop ?? null,
    accuracy: fields.accuracy ?? null,
    battery_level: fields.battery_level ?? null,
    charging: fields.charging ?? null,
    motion: fields.motion ?? null,
    alarm: fields.alarm ?? null,
    sent_by: sentBy,
    import_id: null,
  };
}

/** A point as a request sends it, with who sent it: its device is found when its batch is committed. */
export interface PointToWrite {
  row: NewRow;
  /** The device the body names; it must exist. */
  deviceId: string | undefined;
  /** Without a named device, the point belongs to the device linked to this key, if any. */
  apiKeyId: string | undefined;
  /** A tracker app's point: it must land on the device of its key, and is refused when the key has none. */
  keyDeviceRequired?: boolean;
}

type Repo = ReturnType<typeof createGpsRepo>;
/** A committed point, and whether its device is public (read with the batch's devices: no query of its own). */
export interface WrittenPoint extends StoredPoint {
  devicePublic: boolean;
}

/** Enough for any burst; 16 parameters a row stays far below PostgreSQL's 65,535 per statement. */
const MAX_BATCH = 500;

interface Deps {
  repo: Repo;
  devices: Pick<DevicesService, 'byIds' | 'deviceOfKey'>;
  loggingTripOf: () => LoggingTripOf | undefined;
  /** The point observer registered (see `PointObserver`), and the database to open its transactions on. */
  observer: () => PointObserver | undefined;
  db: Kysely<Schema>;
  /** Runs on each committed batch before its points are answered (the latest-point cache, the gps channel). */
  afterCommit: (points: WrittenPoint[]) => Promise<void>;
  /** `afterCommit` threw: the points are committed and answered all the same. */
  afterCommitFailed: (err: unknown) => void;
  /** Group-committed batches committing at once (see `createGroupCommit`). */
  concurrency: number;
}

/**
 * Writes new points by group commit (see `createGroupCommit`): a batch costs one round trip for its devices
 * and one statement (trip lookups and insert, committed on its own), however many points it holds.
 */
export function createPointWriter(deps: Deps) {
  /**
   * The device of each point (null: none), or the error of a point whose named device does not exist:
   * one query for the devices named in the batch; the devices of API keys come from their cache.
   */
  async function devicesOf(points: PointToWrite[]): Promise<({ id: string; is_public: boolean } | null | Error)[]> {
    const namedSet = new Set<string>();
    const keySet = new Set<string>();
    for (const p of points) {
      if (p.deviceId !== undefined) namedSet.add(p.deviceId);
      else if (p.apiKeyId) keySet.add(p.apiKeyId);
    }
    const named = [...namedSet];
    const keys = [...keySet];
    const [existing, ofKeys] = await Promise.all([
      deps.devices.byIds(named),
      Promise.all(keys.map(deps.devices.deviceOfKey)),
    ]);
    const known = new Map(existing.map((device) => [device.id, device]));
    const byKey = new Map(keys.map((key, i) => [key, ofKeys[i]]));
    return points.map((p) => {
      if (p.deviceId !== undefined) return known.get(p.deviceId) ?? GpsErrors.unknown_device();
      const linked = (p.apiKeyId && byKey.get(p.apiKeyId)) || null;
      return linked === null && p.keyDeviceRequired ? GpsErrors.no_device_for_credential() : linked;
    });
  }

  /** `readBack`: a resent point is answered with the point stored first (a batch only counts them). */
  async function commit(points: PointToWrite[], readBack = true): Promise<Outcome<WrittenPoint>[]> {
    const devices = await devicesOf(points);
    const rows: NewRow[] = [];
    points.forEach((p, i) => {
      const device = devices[i];
      if (device instanceof Error) return;
      p.row.device_id = device?.id ?? null;
      rows.push(p.row);
    });
    const evaluation = rows.length > 0 ? await deps.observer()?.plan(rows) : undefined;
    let stored: Awaited<ReturnType<Repo['insertMany']>> = [];
    if (evaluation) {
      // The insert and the evaluation of what it stored commit together.
      stored = await deps.db.transaction().execute(async (trx) => {
        const inserted = await deps.repo.insertMany(rows, deps.loggingTripOf(), { readBack }, trx);
        await evaluation.run(
          trx,
          rows.filter((_, i) => inserted[i] !== undefined && !inserted[i].duplicate),
        );
        return inserted;
      });
      await evaluation.committed().catch(deps.afterCommitFailed);
    } else if (rows.length > 0) stored = await deps.repo.insertMany(rows, deps.loggingTripOf(), { readBack });
    let next = 0;
    return devices.map((device) => {
      if (device instanceof Error) return { error: device };
      const row = rows[next]!;
      // Not read back (a batch), or stored and deleted again before it could be: as good as stored (the client must not resend it).
      const written = stored[next++] ?? { point: toGpsPoint({ ...row, created_at: new Date() }), duplicate: true };
      return {
        value: { point: written.point, duplicate: written.duplicate, devicePublic: device?.is_public ?? false },
      };
    });
  }

  const groupCommit = createGroupCommit<PointToWrite, WrittenPoint>({
    commit: (inputs) => commit(inputs),
    afterCommit: deps.afterCommit,
    afterCommitFailed: deps.afterCommitFailed,
    failsAll: (err) => classifyDatabaseError(err)?.fault === 'unavailable',
    closed: () => GpsErrors.stopping(),
    maxBatch: MAX_BATCH,
    concurrency: deps.concurrency,
  });

  return {
    ...groupCommit,
    /**
     * A batch a client sent as one (POST /v1/gps/batch, an Overland batch, an import): the same commit as a
     * group-committed batch, in one statement (so one transaction), without waiting in the queue behind
     * single points; its `afterCommit` runs before it resolves. One outcome per input, in their order; a
     * point that was stored before is a `duplicate` (its `point` the one sent, not read back).
     */
    async writeAll(inputs: PointToWrite[]): Promise<Outcome<WrittenPoint>[]> {
      const outcomes = await commit(inputs, false);
      const written: WrittenPoint[] = [];
      for (const outcome of outcomes) if ('value' in outcome) written.push(outcome.value);
      await deps.afterCommit(written).catch(deps.afterCommitFailed);
      return outcomes;
    },
  };
}
