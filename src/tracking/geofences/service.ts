import type { Kysely } from 'kysely';
import type { Static } from 'typebox';
import type { Schema } from '../../platform/db/schema/index.js';

import { createGeofencesRepo } from './repo.js';
import { GeofenceErrors } from './errors.js';
import type { CreateGeofenceBody, UpdateGeofenceBody } from './schemas.js';

/** Circular geofences: a centre and a radius in kilometres (the route schemas and table checks hold the ranges). */
export function createGeofencesService(deps: { db: Kysely<Schema> }) {
  const repo = createGeofencesRepo(deps.db);

  return {
    page: repo.page,

    async get(id: string) {
      const geofence = await repo.get(id);
      if (!geofence) throw GeofenceErrors.not_found();
      return geofence;
    },

    create: (input: Static<typeof CreateGeofenceBody>) => repo.insert(input),

    async update(id: string, fields: Static<typeof UpdateGeofenceBody>) {
      const geofence = await repo.update(id, fields);
      if (!geofence) throw GeofenceErrors.not_found();
      return geofence;
    },

    async remove(id: string) {
      if (!(await repo.delete(id))) throw GeofenceErrors.not_found();
    },
  };
}

export type GeofencesService = ReturnType<typeof createGeofencesService>;
