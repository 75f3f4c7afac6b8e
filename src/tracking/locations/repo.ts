import type { Kysely, Updateable } from 'kysely';
import type { Schema } from '../../platform/db/schema/index.js';

const LOCATION_COLUMNS = [
  'id',
  'name',
  'street',
  'zip',
  'city',
  'country',
  'latitude',
  'longitude',
  'notes',
  'is_active',
  'created_at',
  'updated_at',
] as const;
const CONTACT_COLUMNS = ['id', 'location_id', 'name', 'phone', 'email', 'role', 'created_at'] as const;

export type LocationFields = Omit<Updateable<Schema['locations']>, 'id' | 'created_at' | 'updated_at'>;
export type ContactFields = Omit<Updateable<Schema['location_contacts']>, 'id' | 'location_id' | 'created_at'>;

export function createLocationsRepo(db: Kysely<Schema>) {
  return {
    async page(limit: number, offset: number) {
      const [rows, count] = await Promise.all([
        db
          .selectFrom('locations')
          .select(LOCATION_COLUMNS)
          .orderBy('name')
          .orderBy('id')
          .limit(limit)
          .offset(offset)
          .execute(),
        db
          .selectFrom('locations')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow(),
      ]);
      return { rows, total: Number(count.n) };
    },

    get: (id: string, executor: Kysely<Schema> = db) =>
      executor.selectFrom('locations').select(LOCATION_COLUMNS).where('id', '=', id).executeTakeFirst(),

    contactsOf: (locationId: string, executor: Kysely<Schema> = db) =>
      executor
        .selectFrom('location_contacts')
        .select(CONTACT_COLUMNS)
        .where('location_id', '=', locationId)
        .orderBy('name')
        .orderBy('id')
        .execute(),

    insert: (trx: Kysely<Schema>, fields: LocationFields & { name: string }) =>
      trx.insertInto('locations').values(fields).returning(LOCATION_COLUMNS).executeTakeFirstOrThrow(),

    update: (id: string, fields: LocationFields) =>
      db
        .updateTable('locations')
        .set({ ...fields, updated_at: new Date() })
        .where('id', '=', id)
        .returning(LOCATION_COLUMNS)
        .executeTakeFirst(),

    async delete(id: string): Promise<boolean> {
      const result = await db.deleteFrom('locations').where('id', '=', id).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    insertContacts: (executor: Kysely<Schema>, locationId: string, contacts: (ContactFields & { name: string })[]) =>
      executor
        .insertInto('location_contacts')
        .values(contacts.map((contact) => ({ ...contact, location_id: locationId })))
        .returning(CONTACT_COLUMNS)
        .execute(),

    /** Changes a contact only when it belongs to that location. */
    updateContact: (locationId: string, contactId: string, fields: ContactFields) =>
      db
        .updateTable('location_contacts')
        .set(fields)
        .where('id', '=', contactId)
        .where('location_id', '=', locationId)
        .returning(CONTACT_COLUMNS)
        .executeTakeFirst(),

    async deleteContact(locationId: string, contactId: string): Promise<boolean> {
      const result = await db
        .deleteFrom('location_contacts')
        .where('id', '=', contactId)
        .where('location_id', '=', locationId)
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}
