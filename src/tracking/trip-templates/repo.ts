import type { Kysely, Updateable } from 'kysely';
import type { Schema } from '../../platform/db/schema/index.js';

const COLUMNS = [
  'id',
  'name',
  'description',
  'category_id',
  'origin_id',
  'destination_id',
  'device_id',
  'gps_logging_enabled',
  'default_weight_kg',
  'notes',
  'tags',
  'created_at',
  'updated_at',
] as const;

export type TemplateFields = Omit<Updateable<Schema['trip_templates']>, 'id' | 'created_at' | 'updated_at'>;

export function createTripTemplatesRepo(db: Kysely<Schema>) {
  return {
    list: () => db.selectFrom('trip_templates').select(COLUMNS).orderBy('name').orderBy('id').execute(),

    get: (id: string) => db.selectFrom('trip_templates').select(COLUMNS).where('id', '=', id).executeTakeFirst(),

    insert: (fields: TemplateFields & { name: string }) =>
      db.insertInto('trip_templates').values(fields).returning(COLUMNS).executeTakeFirstOrThrow(),

    update: (id: string, fields: TemplateFields) =>
      db
        .updateTable('trip_templates')
        .set({ ...fields, updated_at: new Date() })
        .where('id', '=', id)
        .returning(COLUMNS)
        .executeTakeFirst(),

    async delete(id: string): Promise<boolean> {
      const result = await db.deleteFrom('trip_templates').where('id', '=', id).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}
