import type { Kysely } from 'kysely';
import type { Static } from 'typebox';
import type { Schema } from '../../platform/db/schema/index.js';

import { createTripCategoriesRepo } from './repo.js';
import { TripCategoryErrors } from './errors.js';
import type { CreateTripCategoryBody, UpdateTripCategoryBody } from './schemas.js';

/** Hierarchical trip categories: a category's parent must exist and the hierarchy stays a tree. */
export function createTripCategoriesService(deps: { db: Kysely<Schema> }) {
  const repo = createTripCategoriesRepo(deps.db);

  /**
   * Writes under the hierarchy lock after checking the new parent: it must exist
   * and must not be the category itself or one of its descendants.
   */
  const save = <T>(
    id: string | null,
    parentId: string | null | undefined,
    write: (trx: Kysely<Schema>) => Promise<T>,
  ) =>
    deps.db.transaction().execute(async (trx) => {
      if (parentId) {
        await repo.lockHierarchy(trx);
        if (parentId === id) throw TripCategoryErrors.own_parent();
        const lineage = await repo.lineageOf(trx, parentId);
        if (lineage.length === 0) throw TripCategoryErrors.unknown_parent();
        if (id && lineage.includes(id)) throw TripCategoryErrors.parent_cycle();
      }
      return write(trx);
    });

  return {
    list: repo.list,

    async get(id: string) {
      const category = await repo.get(id);
      if (!category) throw TripCategoryErrors.not_found();
      return category;
    },

    create: (fields: Static<typeof CreateTripCategoryBody>) =>
      save(null, fields.parent_id, (trx) => repo.insert(trx, fields)),

    update: (id: string, fields: Static<typeof UpdateTripCategoryBody>) =>
      save(id, fields.parent_id, async (trx) => {
        const category = await repo.update(trx, id, fields);
        if (!category) throw TripCategoryErrors.not_found();
        return category;
      }),

    /** Children become top-level categories; trips and templates lose the reference (foreign keys set null). */
    async remove(id: string) {
      if (!(await repo.delete(id))) throw TripCategoryErrors.not_found();
    },
  };
}

export type TripCategoriesService = ReturnType<typeof createTripCategoriesService>;
