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

/**
 * A user's own geofences (beyond the spec's global holders, who keep its rules unchanged) are bounded: every one
 * is checked against every point of the devices its owner sees, so their number and size are what a person needs
 * (a home, a school, a town), not a continent covered thousands of times over.
 */
export const MAX_OWN_GEOFENCES = 1000;
export const MAX_OWN_RADIUS_KM = 100;

/** 400 naming the field when a user's own geofence is larger than they may make. */
function assertOwnSize(scope: TrackingScope, shape: { radius_km?: number; polygon?: unknown }) {
  if (scope.all || shape.radius_km === undefined || shape.radius_km <= MAX_OWN_RADIUS_KM) return;
  const field = shape.polygon ? 'polygon' : 'radius_km';
  throw RequestErrors.validation(
    `Body field '${field}' makes a geofence wider than ${MAX_OWN_RADIUS_KM} km across its radius, the most for your own`,
  );
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
      assertOwnSize(scope, { radius_km: shape.radius_km, polygon });
      if (!scope.all && (await repo.countOf(scope.userId)) >= MAX_OWN_GEOFENCES) throw GeofenceErrors.too_many();
      const geofence = await repo.insert({ ...rest, ...shape }, scope.all ? null : scope.userId);
      await changed();
      return geofence;
    },

    async update(scope: TrackingScope, id: string, fields: Static<typeof UpdateGeofenceBody>) {
      const current = await changeable(scope, id);
      const { polygon, ...rest } = fields;
      let shape: Partial<ReturnType<typeof polygonFields>> = {};
      if (polygon) shape = polygonFields(polygon);
      else if (polygon === undefined && current.polygon) {
        const circle = (['latitude', 'longitude', 'radius_km'] as const).find((name) => rest[name] !== undefined);
        if (circle)
          throw RequestErrors.validation(
            `Body field '${circle}' is computed for a polygon geofence (send polygon: null to make it a circle)`,
          );
      }
      assertOwnSize(scope, { radius_km: shape.radius_km ?? rest.radius_km, polygon });
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
