import type { Kysely } from 'kysely';
import type { Static } from 'typebox';
import type { Schema } from '../../platform/db/schema/index.js';

import { createLocationsRepo } from './repo.js';
import { LocationErrors } from './errors.js';
import type { CreateContactBody, CreateLocationBody, UpdateContactBody, UpdateLocationBody } from './schemas.js';

/** Locations (trip origins and destinations) and the people to contact there. */
export function createLocationsService(deps: { db: Kysely<Schema> }) {
  const repo = createLocationsRepo(deps.db);

  async function requireLocation(id: string) {
    const location = await repo.get(id);
    if (!location) throw LocationErrors.not_found();
    return location;
  }

  const withContacts = async <T extends { id: string }>(location: T) => ({
    ...location,
    contacts: await repo.contactsOf(location.id),
  });

  return {
    page: repo.page,

    get: async (id: string) => withContacts(await requireLocation(id)),

    /** The location and its contacts are written in one transaction: an invalid contact leaves nothing behind. */
    create: ({ contacts = [], ...fields }: Static<typeof CreateLocationBody>) =>
      deps.db.transaction().execute(async (trx) => {
        const location = await repo.insert(trx, fields);
        if (contacts.length > 0) await repo.insertContacts(trx, location.id, contacts);
        return { ...location, contacts: await repo.contactsOf(location.id, trx) };
      }),

    /** Changes the location's own fields; its contacts are managed through the contact routes only. */
    async update(id: string, fields: Static<typeof UpdateLocationBody>) {
      const location = await repo.update(id, fields);
      if (!location) throw LocationErrors.not_found();
      return withContacts(location);
    },

    async remove(id: string) {
      if (!(await repo.delete(id))) throw LocationErrors.not_found();
    },

    async addContact(locationId: string, contact: Static<typeof CreateContactBody>) {
      await requireLocation(locationId);
      const [created] = await repo.insertContacts(deps.db, locationId, [contact]);
      return created!;
    },

    async updateContact(locationId: string, contactId: string, fields: Static<typeof UpdateContactBody>) {
      const contact = await repo.updateContact(locationId, contactId, fields);
      if (!contact) throw LocationErrors.contact_not_found();
      return contact;
    },

    async removeContact(locationId: string, contactId: string) {
      if (!(await repo.deleteContact(locationId, contactId))) throw LocationErrors.contact_not_found();
    },
  };
}

export type LocationsService = ReturnType<typeof createLocationsService>;
