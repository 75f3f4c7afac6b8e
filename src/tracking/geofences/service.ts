import type { Kysely } from 'kysely';
import type { Static } from 'typebox';
import type { Schema } from '../../platform/db/schema/index.js';

import type { TrackingScope } from '../sharing/index.js';
import { createGeofencesRepo, type GeofenceOwners } from './repo.js';
import { GeofenceErrors } from './errors.js';
import type { CreateGeofenceBody, UpdateGeofenceBody } from './schemas.js';

/**
 * The geofences a scope reads (docs/sharing.md): every one for the global permission; else the caller's own and
 * those of the owners sharing a device with them at level full (instance-wide ones, owner null, stay staff's).
 */
function readersOwners(scope: TrackingScope): GeofenceOwners {
  return scope.all ? undefined : [scope.userId, ...scope.access.sharersAtLeast('full')];
}

/** Circular geofences: a centre and a radius in kilometres (the route schemas and table checks hold the ranges). */
export function createGeofencesService(deps: { db: Kysely<Schema> }) {
  const repo = createGeofencesRepo(deps.db);

  async function visible(scope: TrackingScope, id: string) {
    const geofence = await repo.get(id, readersOwners(scope));
    if (!geofence) throw GeofenceErrors.not_found();
    return geofence;
  }

  /** One the scope may change: 404 when not seen, 403 when seen but made by someone else. */
  async function changeable(scope: TrackingScope, id: string): Promise<void> {
    const geofence = await visible(scope, id);
    if (!scope.all && geofence.owner_id !== scope.userId) throw GeofenceErrors.not_owner();
  }

  return {
    page: (scope: TrackingScope, limit: number, offset: number) => repo.page(limit, offset, readersOwners(scope)),

    async get(scope: TrackingScope, id: string) {
      const { owner_id: _owner, ...geofence } = await visible(scope, id);
      return geofence;
    },

    /** One made in the own scope belongs to its maker; one made with the global permission is instance-wide. */
    create: (scope: TrackingScope, input: Static<typeof CreateGeofenceBody>) =>
      repo.insert(input, scope.all ? null : scope.userId),

    async update(scope: TrackingScope, id: string, fields: Static<typeof UpdateGeofenceBody>) {
      await changeable(scope, id);
      const geofence = await repo.update(id, fields);
      if (!geofence) throw GeofenceErrors.not_found();
      return geofence;
    },

    async remove(scope: TrackingScope, id: string) {
      await changeable(scope, id);
      if (!(await repo.delete(id))) throw GeofenceErrors.not_found();
    },
  };
}

export type GeofencesService = ReturnType<typeof createGeofencesService>;
