import type { Kysely } from 'kysely';
import type { Schema } from '../../platform/db/schema.js';
import { conflict, notFound } from '../../platform/http/errors.js';
import { createSettingsRepo, type SettingFields } from './repo.js';

/** Operator settings (created, replaced, deleted) and the pre-seeded system config (update only). */
export function createSettingsService(deps: { db: Kysely<Schema> }) {
  const repo = createSettingsRepo(deps.db);

  return {
    list: () => repo.list(),
    listPublic: () => repo.list(true),

    async get(key: string) {
      const setting = await repo.get(key);
      if (!setting) throw notFound('Setting not found');
      return setting;
    },

    async create(key: string, fields: SettingFields & { value: unknown }) {
      const created = await repo.insert(key, fields);
      if (!created) throw conflict(`Setting '${key}' already exists`);
      return created;
    },

    /** PUT: replaces the setting, or creates it; tells which. */
    async put(key: string, fields: SettingFields & { value: unknown }) {
      const created = await repo.insert(key, fields);
      if (created) return { setting: created, created: true };
      return { setting: (await repo.update(key, fields))!, created: false };
    },

    async remove(key: string) {
      if (!(await repo.delete(key))) throw notFound('Setting not found');
    },

    listConfig: (prefix?: string) => repo.listConfig(prefix),

    async getConfig(key: string) {
      const entry = await repo.getConfig(key);
      if (!entry) throw notFound('System config entry not found');
      return entry;
    },

    /** A config value for the service's own use, or the fallback when the entry is missing. */
    async configValue<T>(key: string, fallback: T): Promise<T> {
      const entry = await repo.getConfig(key);
      return entry === undefined ? fallback : (entry.value as T);
    },

    async updateConfig(key: string, value: unknown) {
      const entry = await repo.updateConfig(key, value);
      if (!entry) throw notFound('System config entry not found');
      return entry;
    },
  };
}

export type SettingsService = ReturnType<typeof createSettingsService>;
