import type { Kysely } from 'kysely';
import type { Static } from 'typebox';
import type { Schema } from '../../platform/db/schema/index.js';
import type { Caches } from '../../platform/kv/cache.js';
import { RequestErrors } from '../../platform/http/errors.js';
import type { TrackingScope } from '../sharing/index.js';
import { createGeofencesRepo, type GeofenceOwners } from './repo.js';
import { GeofenceErrors } from './errors.js';
import { enclosingCircle, polygonProblem, type PolygonGeometry } from './geometry.js';
import type { CreateGeofenceBody, UpdateGeofenceBody } from './schemas.js';

/**
 * The geofences a scope reads (docs/sharing.md): every one for the global permission; else the caller's own and
 * those of the owners sharing a device with them at level full (instance-wide ones, owner null, stay staff's).
 */
function readersOwners(scope: TrackingScope): GeofenceOwners {
  return scope.all ? undefined : [scope.userId, ...scope.access.sharersAtLeast('full')];
}

/** A polygon checked (400 naming the field) and the circle fields computed from it. */
function polygonFields(polygon: PolygonGeometry) {
  const problem = polygonProblem(polygon);
  if (problem) throw RequestErrors.validation(problem);
  return { polygon, ...enclosingCircle(polygon) };
}

/** An active geofence as the events module evaluates points against it. */
export type ActiveGeofence = Awaited<ReturnType<ReturnType<typeof createGeofencesRepo>['active']>>[number];

/**
 * Geofences: a circle (a centre and a radius in kilometres), or a GeoJSON polygon whose centre and enclosing
 * radius fill the circle fields (docs/gps.md, "Geofences"). The route schemas and table checks hold the ranges.
 * Every change is told to every node (`onChanged`): the events module keeps an index of them in memory.
 */
export function createGeofencesService(deps: { db: Kysely<Schema>; caches: Caches }) {
  const repo = createGeofencesRepo(deps.db);
  const listeners: (() => void)[] = [];
  // Holds no values: its invalidations are the message "geofences changed" to every node (this one included).
  const changes = deps.caches.define<never>('geofences_changed', {
    sharedTtlSecs: 1,
    localTtlMs: 1,
    onInvalidated: () => listeners.forEach((listener) => listener()),
  });
  const changed = () => changes.invalidate(['all']);

  async function visible(scope: TrackingScope, id: string) {
    const geofence = await repo.get(id, readersOwners(scope));
    if (!geofence) throw GeofenceErrors.not_found();
    return geofence;
  }

  /** One the scope may change: 404 when not seen, 403 when seen but made by someone else. */
  async function changeable(scope: TrackingScope, id: string) {
    const geofence = await visible(scope, id);
    if (!scope.all && geofence.owner_id !== scope.userId) throw GeofenceErrors.not_owner();
    return geofence;
  }

  return {
    page: (scope: TrackingScope, limit: number, offset: number) => repo.page(limit, offset, readersOwners(scope)),

    async get(scope: TrackingScope, id: string) {
      const { owner_id: _owner, ...geofence } = await visible(scope, id);
      return geofence;
    },

    /** One made in the own scope belongs to its maker; one made with the global permission is instance-wide. */
    async create(scope: TrackingScope, input: Static<typeof CreateGeofenceBody>) {
      const { polygon, latitude, longitude, radius_km, ...rest } = input;
      let shape;
      if (polygon) shape = polygonFields(polygon);
      else {
        // A circle: the spec's required fields, refused as the schema would refuse them.
        const missing = (['latitude', 'longitude', 'radius_km'] as const).find((name) => input[name] === undefined);
        if (missing) throw RequestErrors.validation(`Body field '${missing}' is required`);
        shape = { latitude: latitude!, longitude: longitude!, radius_km: radius_km! };
      }
      const geofence = await repo.insert({ ...rest, ...shape }, scope.all ? null : scope.userId);
      await changed();
      return geofence;
    },

    async update(scope: TrackingScope, id: string, fields: Static<typeof UpdateGeofenceBody>) {
      const current = await changeable(scope, id);
      const { polygon, ...rest } = fields;
      let shape = {};
      if (polygon) shape = polygonFields(polygon);
      else if (polygon === undefined && current.polygon) {
        const circle = (['latitude', 'longitude', 'radius_km'] as const).find((name) => rest[name] !== undefined);
        if (circle)
          throw RequestErrors.validation(
            `Body field '${circle}' is computed for a polygon geofence (send polygon: null to make it a circle)`,
          );
      }
      const geofence = await repo.update(id, { ...rest, ...(polygon === null ? { polygon: null } : {}), ...shape });
      if (!geofence) throw GeofenceErrors.not_found();
      await changed();
      return geofence;
    },

    async remove(scope: TrackingScope, id: string) {
      await changeable(scope, id);
      if (!(await repo.delete(id))) throw GeofenceErrors.not_found();
      await changed();
    },

    /** Which of these geofences exist, locked against deletion in `trx` (the events of a batch refer to them). */
    existing: repo.existing,
    /** Every active geofence (for the events module's index; read again when `onChanged` says so). */
    active: () => repo.active(),

    /** Told on every node when any node creates, changes or deletes a geofence. */
    onChanged(listener: () => void): void {
      listeners.push(listener);
    },
  };
}

export type GeofencesService = ReturnType<typeof createGeofencesService>;
