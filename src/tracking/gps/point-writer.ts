import { randomUUID } from 'node:crypto';
import { classifyDatabaseError } from '../../platform/db/errors.js';
import { createGroupCommit, type Outcome } from '../../platform/db/group-commit.js';
import type { DevicesService } from '../devices/service.js';
import type { createGpsRepo, LoggingTripQuery, NewGpsPoint } from './repo.js';
import { GpsErrors } from './errors.js';

/**
 * The query for the trip new points of a device join (its active GPS-logging trip), run inside the insert
 * with the trip row locked, so a trip completed meanwhile never gains a point. The trips module registers it
 * at start-up (trips read points through this service, so they cannot be a dependency of it).
 */
export type LoggingTripOf = LoggingTripQuery;

/** A point as a request sends it, with who sent it: its device is found when its batch is committed. */
export interface PointToWrite {
  point: Omit<NewGpsPoint, 'device_id' | 'trip_id'>;
  /** The device the body names; it must exist. */
  deviceId: string | undefined;
  /** Without a named device, the point belongs to the device linked to this key, if any. */
  apiKeyId: string | undefined;
}

type Repo = ReturnType<typeof createGpsRepo>;
export type StoredPoint = Awaited<ReturnType<Repo['insertMany']>>[number];
/** A committed point, and whether its device is public (read with the batch's devices: no query of its own). */
export interface WrittenPoint {
  point: StoredPoint;
  devicePublic: boolean;
}

/** Enough for any burst; 16 parameters a row stays far below PostgreSQL's 65,535 per statement. */
const MAX_BATCH = 500;

interface Deps {
  repo: Repo;
  devices: Pick<DevicesService, 'byIds' | 'ofApiKeys'>;
  loggingTripOf: () => LoggingTripOf | undefined;
  /** Runs on each committed batch before its points are answered (the latest-point cache). */
  afterCommit: (points: WrittenPoint[]) => Promise<void>;
  /** `afterCommit` threw: the points are committed and answered all the same. */
  afterCommitFailed: (err: unknown) => void;
}

/**
 * Writes new points by group commit (see `createGroupCommit`): a batch costs one round trip for its devices
 * and one statement (trip lookups and insert, committed on its own), however many points it holds.
 */
export function createPointWriter(deps: Deps) {
  /**
   * The device of each point (null: none), or the error of a point whose named device does not exist:
   * two queries for the whole batch, where a point alone used to cost one.
   */
  async function devicesOf(points: PointToWrite[]): Promise<({ id: string; is_public: boolean } | null | Error)[]> {
    const named = [...new Set(points.flatMap((p) => (p.deviceId === undefined ? [] : [p.deviceId])))];
    const keys = [...new Set(points.flatMap((p) => (p.deviceId === undefined && p.apiKeyId ? [p.apiKeyId] : [])))];
    const [existing, linked] = await Promise.all([deps.devices.byIds(named), deps.devices.ofApiKeys(keys)]);
    const known = new Map(existing.map((device) => [device.id, device]));
    const byKey = new Map(linked.map((device) => [device.api_key_id, device]));
    return points.map((p) => {
      if (p.deviceId !== undefined) return known.get(p.deviceId) ?? GpsErrors.unknown_device();
      return (p.apiKeyId && byKey.get(p.apiKeyId)) || null;
    });
  }

  async function commit(points: PointToWrite[]): Promise<Outcome<WrittenPoint>[]> {
    const devices = await devicesOf(points);
    const rows = points.flatMap((p, i) => {
      const device = devices[i];
      return device instanceof Error ? [] : [{ ...p.point, id: randomUUID(), device_id: device?.id ?? null, trip_id: null as string | null }];
    });
    const stored = new Map<string, StoredPoint>();
    if (rows.length > 0) for (const point of await deps.repo.insertMany(rows, deps.loggingTripOf())) stored.set(point.id, point);
    let next = 0;
    return devices.map((device) =>
      device instanceof Error ? { error: device } : { value: { point: stored.get(rows[next++]!.id)!, devicePublic: device?.is_public ?? false } },
    );
  }

  return createGroupCommit<PointToWrite, WrittenPoint>({
    commit,
    afterCommit: deps.afterCommit,
    afterCommitFailed: deps.afterCommitFailed,
    failsAll: (err) => classifyDatabaseError(err)?.fault === 'unavailable',
    closed: () => GpsErrors.stopping(),
    maxBatch: MAX_BATCH,
  });
}
