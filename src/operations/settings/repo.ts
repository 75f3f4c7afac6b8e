import { sql, type Kysely } from 'kysely';
import type { Schema } from '../../platform/db/schema/index.js';

const SETTING_COLUMNS = ['key', 'value', 'description', 'is_public', 'created_at', 'updated_at'] as const;
const CONFIG_COLUMNS = ['key', 'value', 'description', 'updated_at'] as const;

export interface SettingFields {
  value?: unknown;
  description?: string | null;
  is_public?: boolean;
}

const json = (value: unknown) => JSON.stringify(value);

export function createSettingsRepo(db: Kysely<Schema>) {
  return {
    list: (onlyPublic = false) => {
      let query = db.selectFrom('settings').select(SETTING_COLUMNS).orderBy('key');
      if (onlyPublic) query = query.where('is_public', '=', true);
      return query.execute();
    },

    get: (key: string) => db.selectFrom('settings').select(SETTING_COLUMNS).where('key', '=', key).executeTakeFirst(),

    /** Inserts a setting; undefined when the key is taken. */
    insert: (key: string, fields: SettingFields & { value: unknown }) =>
      db
        .insertInto('settings')
        .values({
          key,
          value: json(fields.value),
          description: fields.description ?? null,
          is_public: fields.is_public ?? false,
        })
        .onConflict((oc) => oc.column('key').doNothing())
        .returning(SETTING_COLUMNS)
        .executeTakeFirst(),

    /**
     * Creates or replaces a setting in one statement, so a concurrent delete cannot fall between a refused
     * insert and the update; `created` says which it did (a new row has no xmax).
     */
    upsert: (key: string, fields: SettingFields & { value: unknown }) =>
      db
        .insertInto('settings')
        .values({
          key,
          value: json(fields.value),
          description: fields.description ?? null,
          is_public: fields.is_public ?? false,
        })
        .onConflict((oc) =>
          oc.column('key').doUpdateSet({
            value: json(fields.value),
            ...(fields.description !== undefined && { description: fields.description }),
            ...(fields.is_public !== undefined && { is_public: fields.is_public }),
            updated_at: new Date(),
          }),
        )
        .returning([...SETTING_COLUMNS, sql<boolean>`xmax = 0`.as('created')])
        .executeTakeFirstOrThrow(),

    async delete(key: string): Promise<boolean> {
      const result = await db.deleteFrom('settings').where('key', '=', key).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    listConfig: (prefix?: string) => {
      let query = db.selectFrom('system_config').select(CONFIG_COLUMNS).orderBy('key');
      // starts_with, not LIKE: a prefix containing % or _ matches literally.
      if (prefix) query = query.where((eb) => eb.fn<boolean>('starts_with', ['key', eb.val(prefix)]));
      return query.execute();
    },

    getConfig: (key: string) =>
      db.selectFrom('system_config').select(CONFIG_COLUMNS).where('key', '=', key).executeTakeFirst(),

    updateConfig: (key: string, value: unknown) =>
      db
        .updateTable('system_config')
        .set({ value: json(value), updated_at: new Date() })
        .where('key', '=', key)
        .returning(CONFIG_COLUMNS)
        .executeTakeFirst(),
  };
}
