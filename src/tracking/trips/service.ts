import type { Kysely } from 'kysely';
import type { Clock } from '../../platform/clock.js';
import type { Static } from 'typebox';
import type { Caller } from '../../platform/auth/caller.js';
import type { PageStart } from '../../platform/db/page.js';
import type { Schema, TripStatus } from '../../platform/db/schema/index.js';
import { afterCommit, type DomainEventBus } from '../../platform/events.js';

import { DatabaseErrors } from '../../platform/http/errors.js';
import { DeviceErrors } from '../devices/errors.js';
import type { GpsService } from '../gps/service.js';
import type { TrackingScope } from '../sharing/index.js';
import { createTripsRepo, type TripFields, type TripFilter } from './repo.js';
import type { UpdateTripBody } from './schemas.js';
import { TripErrors } from './errors.js';

/** The trip state machine: draft → active ⇄ paused → completed (active → completed too). */
const NEXT_STATUSES: Record<TripStatus, TripStatus[]> = {
  draft: ['active'],
  active: ['paused', 'completed'],
  paused: ['active', 'completed'],
  completed: [],
};

/** What create and update take: the fields of PATCH /v1/trips/{id} (its route schema is the one source of the type). */
export type TripInput = Static<typeof UpdateTripBody>;

interface Position {
  latitude: number;
  longitude: number;
}

interface Deps {
  db: Kysely<Schema>;
  /** Start and end times of trips. */
  clock: Clock;
  /** trip.deleting: cached latest points may still name the trip. */
  events: Pick<DomainEventBus, 'emit'>;
  /** The latest GPS point of a device (from the GPS area's cache). */
  latestPositionOf: (deviceId: string) => Promise<Position | null>;
  /** gps_logging_enabled of a new trip that does not say (system config trips.default_gps_logging). */
  defaultGpsLogging: () => Promise<boolean>;
  /** A page of a trip's points by time, and a count of them within a window (the GPS area's). */
  pointsOfTrip: GpsService['pointsOfTrip'];
  countOfTripSince: GpsService['countOfTripSince'];
}

/**
 * The trips a scope reads (docs/sharing.md): every one for the global permission; else the caller's own and
 * those of devices they reach at `full` (or own, to change them).
 */
function filterOf(scope: TrackingScope, level: 'full' | 'owner'): TripFilter | undefined {
  return scope.all ? undefined : { userId: scope.userId, deviceIds: scope.access.deviceIdsAtLeast(level) };
}

/** The device a trip logs to: a self-service caller names one they own (one they do not see is not there). */
function checkDevice(scope: TrackingScope, deviceId: string | null | undefined): void {
  if (scope.all || deviceId === undefined || deviceId === null) return;
  if (!scope.access.seesLive(deviceId))
    throw DatabaseErrors.missing_reference('device_id does not name an existing device');
  if (!scope.access.atLeast(deviceId, 'owner')) throw DeviceErrors.not_owner('A trip logs only to a device you own');
}

export function createTripsService(deps: Deps) {
  const repo = createTripsRepo(deps.db);

  async function requireTrip(scope: TrackingScope, id: string) {
    const trip = await repo.get(id, filterOf(scope, 'full'));
    if (!trip) throw TripErrors.not_found();
    return trip;
  }

  /** A trip the scope may change or delete: 404 when it is not seen, 403 when seen but not the caller's. */
  async function changeableTrip(scope: TrackingScope, id: string) {
    const trip = await requireTrip(scope, id);
    if (!scope.all && !(await repo.get(id, filterOf(scope, 'owner')))) throw TripErrors.not_owner();
    return trip;
  }

  /**
   * A trip the scope reads, and the earliest of its points it may read: `since` undefined for all (every caller
   * but a grantee whose share shows fewer days than the trip spans).
   */
  async function readable(scope: TrackingScope, id: string) {
    const trip = await requireTrip(scope, id);
    if (scope.all || !trip.device_id || (await repo.get(id, filterOf(scope, 'owner')))) return { trip };
    const since = scope.access.pointsSince(trip.device_id);
    return { trip, since: since === null || since === undefined ? undefined : new Date(since) };
  }

  /** Where a status change happened: the request's start/end coordinates, else the device's latest point. */
  async function positionOf(status: TripStatus, input: TripInput, deviceId: string | null): Promise<Position | null> {
    const [latitude, longitude] =
      status === 'completed'
        ? [input.end_latitude, input.end_longitude]
        : [input.start_latitude, input.start_longitude];
    if (typeof latitude === 'number' && typeof longitude === 'number') return { latitude, longitude };
    return deviceId ? deps.latestPositionOf(deviceId) : null;
  }

  return {
    page: (scope: TrackingScope, limit: number, offset: number, status?: TripStatus) =>
      repo.page(limit, offset, status, filterOf(scope, 'full')),
    get: requireTrip,
    history: async (scope: TrackingScope, id: string) => {
      await requireTrip(scope, id);
      return repo.history(id);
    },
    /**
     * A page of the trip's points by time. The total is the trip's own count, kept exact by a trigger on
     * gps_points (migration 0007: every insert, delete and change of trip_id), so no page counts points; a
     * grantee whose history window starts later gets the points within it, counted.
     */
    readable,
    points: async (scope: TrackingScope, id: string, limit: number, start: PageStart) => {
      const since = scope.all ? undefined : (await readable(scope, id)).since;
      const [page, total] = await Promise.all([
        deps.pointsOfTrip(id, limit, start, since),
        since ? deps.countOfTripSince(id, since) : repo.pointCount(id),
      ]);
      if (total === undefined) throw TripErrors.not_found();
      return { ...page, total };
    },

    /** Trips per status and in all (public statistics). */
    async countByStatus() {
      const counts = { draft: 0, active: 0, paused: 0, completed: 0, total: 0 };
      for (const row of await repo.countByStatus()) {
        counts[row.status] = Number(row.n);
        counts.total += Number(row.n);
      }
      return counts;
    },
    loggingTripOf: repo.loggingTripOf,

    /** New trips start as drafts; one made in the own scope belongs to its maker (else instance-wide). */
    async create(scope: TrackingScope, input: TripInput & { name: string }) {
      checkDevice(scope, input.device_id);
      const gpsLogging = input.gps_logging_enabled ?? (await deps.defaultGpsLogging()) === true;
      const owner = scope.all ? {} : { owner_id: scope.userId };
      return repo.insert({ ...input, ...owner, gps_logging_enabled: gpsLogging, status: 'draft' });
    },

    /**
     * Applies field changes and, with `status`, one step of the state machine:
     * started_at/ended_at are set, a history entry is written, and activating a
     * GPS-logging trip fails with 409 while another one logs on the same device
     * (checked under a row lock and guaranteed by a partial unique index).
     */
    async update(caller: Caller, scope: TrackingScope, id: string, input: TripInput) {
      const { status, ...fields } = input;
      const before = await changeableTrip(scope, id);
      checkDevice(scope, fields.device_id);
      // Read outside the transaction: the embedded database has a single connection.
      const position = status ? await positionOf(status, input, fields.device_id ?? before.device_id) : null;
      // A concurrent activation that slips past the check hits trips_one_logging_trip_per_device,
      // which the error handler answers as trip.logging_conflict.
      return deps.db.transaction().execute(async (trx) => {
        const trip = await repo.getForUpdate(trx, id);
        if (!trip) throw TripErrors.not_found();
        if (status !== undefined && !NEXT_STATUSES[trip.status].includes(status)) {
          throw TripErrors.invalid_transition(`A trip cannot go from ${trip.status} to ${status}`);
        }
        const next = { ...trip, ...fields, status: status ?? trip.status };
        if (next.status === 'active' && next.gps_logging_enabled && next.device_id) {
          if (await repo.otherLoggingTrip(trx, next.device_id, id)) throw TripErrors.logging_conflict();
        }
        const changes: TripFields = { ...fields };
        if (status) {
          changes.status = status;
          if (status === 'active' && !trip.started_at) changes.started_at = deps.clock.now();
          if (status === 'completed') changes.ended_at = deps.clock.now();
        }
        const updated = await repo.update(trx, id, changes);
        if (status) {
          await repo.addHistory(trx, {
            trip_id: id,
            old_status: trip.status,
            new_status: status,
            changed_by: caller.userId,
            latitude: position?.latitude ?? null,
            longitude: position?.longitude ?? null,
          });
        }
        return updated;
      });
    },

    async remove(scope: TrackingScope, id: string) {
      await changeableTrip(scope, id);
      const { onCommit, committed } = afterCommit();
      await deps.db.transaction().execute(async (trx) => {
        const trip = await repo.getForUpdate(trx, id);
        if (!trip) throw TripErrors.not_found();
        if (trip.status !== 'draft' && trip.status !== 'completed') {
          throw TripErrors.not_deletable(`A ${trip.status} trip cannot be deleted; complete it first`);
        }
        // Before the delete: its points still name it, so the reactions can find who logged to it.
        await deps.events.emit('trip.deleting', { tripId: id, trx, onCommit });
        await repo.delete(trx, id);
      });
      await committed();
    },
  };
}

export type TripsService = ReturnType<typeof createTripsService>;
