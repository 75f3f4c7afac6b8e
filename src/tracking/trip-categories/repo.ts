import { sql, type Kysely, type Updateable } from 'kysely';
import type { Schema } from '../../platform/db/schema/index.js';

const COLUMNS = [
  'id',
  'parent_id',
  'name',
  'description',
  'color',
  'is_active',
  'sort_order',
  'created_at',
  'updated_at',
] as const;

export type CategoryFields = Omit<Updateable<Schema['trip_categories']>, 'id' | 'created_at' | 'updated_at'>;

export function createTripCategoriesRepo(db: Kysely<Schema>) {
  return {
    list: () =>
      db.selectFrom('trip_categories').select(COLUMNS).orderBy('sort_order').orderBy('name').orderBy('id').execute(),

    get: (id: string) => db.selectFrom('trip_categories').select(COLUMNS).where('id', '=', id).executeTakeFirst(),

    /**
     * Serialises changes of parents: two concurrent moves could otherwise each
     * pass the cycle check and together close a loop.
     */
    lockHierarchy: (trx: Kysely<Schema>) =>
      sql`select pg_advisory_xact_lock(hashtext('trip_categories.parent_id'))`.execute(trx),

    /** Ids of a category and all of its ancestors (a recursive walk up parent_id). */
    async lineageOf(trx: Kysely<Schema>, id: string): Promise<string[]> {
      const result = await sql<{ id: string }>`
        with recursive lineage (id, parent_id) as (
          select id, parent_id from trip_categories where id = ${id}
          union
          select c.id, c.parent_id from trip_categories c join lineage l on c.id = l.parent_id
        )
        select id from lineage`.execute(trx);
      return result.rows.map((row) => row.id);
    },

    insert: (trx: Kysely<Schema>, fields: CategoryFields & { name: string }) =>
      trx.insertInto('trip_categories').values(fields).returning(COLUMNS).executeTakeFirstOrThrow(),

    update: (trx: Kysely<Schema>, id: string, fields: CategoryFields) =>
      trx
        .updateTable('trip_categories')
        .set({ ...fields, updated_at: new Date() })
        .where('id', '=', id)
        .returning(COLUMNS)
        .executeTakeFirst(),

    async delete(id: string): Promise<boolean> {
      const result = await db.deleteFrom('trip_categories').where('id', '=', id).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}
