import type { Kysely } from 'kysely';
import type { Schema } from '../../platform/db/schema/index.js';

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export type PlatformSetting = 'enabled' | 'two_factor_required' | 'registration_enabled';

export function createLoginProvidersRepo(db: Kysely<Schema>) {
  return {
    list(onlyEnabled = false) {
      let query = db.selectFrom('platforms').selectAll().orderBy('name').orderBy('slug');
      if (onlyEnabled) query = query.where('enabled', '=', true);
      return query.execute();
    },

    /** Adds the platforms that do not exist yet (disabled); returns the slugs added. */
    async addMissing(platforms: { slug: string; name: string }[]): Promise<string[]> {
      if (platforms.length === 0) return [];
      const rows = await db
        .insertInto('platforms')
        .values(platforms.map(({ slug, name }) => ({ slug, name, is_oauth: true, enabled: false })))
        .onConflict((oc) => oc.column('slug').doNothing())
        .returning('slug')
        .execute();
      return rows.map((row) => row.slug);
    },

    /** A UUID is looked up as the id, anything else as the (lower-case) slug. */
    find(idOrSlug: string, executor: Kysely<Schema> = db) {
      const query = executor.selectFrom('platforms').selectAll();
      return (
        UUID_PATTERN.test(idOrSlug)
          ? query.where('id', '=', idOrSlug.toLowerCase())
          : query.where('slug', '=', idOrSlug.toLowerCase())
      ).executeTakeFirst();
    },

    /** The row, locked for the rest of the transaction so concurrent changes audit the right old values. */
    findForUpdate(id: string, trx: Kysely<Schema>) {
      return trx.selectFrom('platforms').selectAll().where('id', '=', id).forUpdate().executeTakeFirstOrThrow();
    },

    update(id: string, changes: Partial<Record<PlatformSetting, boolean>>, trx: Kysely<Schema>) {
      return trx
        .updateTable('platforms')
        .set({ ...changes, updated_at: new Date() })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirstOrThrow();
    },
  };
}

export type PlatformRow = NonNullable<Awaited<ReturnType<ReturnType<typeof createLoginProvidersRepo>['find']>>>;
