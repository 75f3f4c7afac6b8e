import type { Kysely } from 'kysely';
import type { Static } from 'typebox';
import type { Schema } from '../../platform/db/schema/index.js';

import { EVERY_DEVICE } from '../sharing/index.js';
import type { TripsService } from '../trips/service.js';
import { createTripTemplatesRepo } from './repo.js';
import { TripTemplateErrors } from './errors.js';
import type { CreateTripTemplateBody, UpdateTripTemplateBody } from './schemas.js';

/** Trip templates: saved trip values that new trips are created from. */
export function createTripTemplatesService(deps: { db: Kysely<Schema>; trips: Pick<TripsService, 'create'> }) {
  const repo = createTripTemplatesRepo(deps.db);

  async function requireTemplate(id: string) {
    const template = await repo.get(id);
    if (!template) throw TripTemplateErrors.not_found();
    return template;
  }

  return {
    list: repo.list,
    get: requireTemplate,
    create: (input: Static<typeof CreateTripTemplateBody>) => repo.insert(input),

    /** Every field is optional; an empty body changes nothing and answers the template as it is. */
    async update(id: string, fields: Static<typeof UpdateTripTemplateBody>) {
      if (Object.keys(fields).length === 0) return requireTemplate(id);
      const template = await repo.update(id, fields);
      if (!template) throw TripTemplateErrors.not_found();
      return template;
    },

    async remove(id: string) {
      if (!(await repo.delete(id))) throw TripTemplateErrors.not_found();
    },

    /**
     * A new draft trip with every value of the template and the given weight.
     * It goes through the trips service so trips keep one place for their rules (with the global permission:
     * templates are staff's, trip_templates:write).
     */
    async createTrip(id: string, weightKg: number) {
      const template = await requireTemplate(id);
      return deps.trips.create(EVERY_DEVICE, {
        name: `${template.name} (from template)`,
        description: template.description,
        category_id: template.category_id,
        origin_id: template.origin_id,
        destination_id: template.destination_id,
        device_id: template.device_id,
        gps_logging_enabled: template.gps_logging_enabled,
        notes: template.notes,
        tags: template.tags,
        weight_kg: weightKg,
      });
    },
  };
}

export type TripTemplatesService = ReturnType<typeof createTripTemplatesService>;
