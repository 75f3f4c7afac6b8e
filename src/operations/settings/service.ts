import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Static } from 'typebox';
import type { Caches } from '../../platform/kv/cache.js';
import type { Schema } from '../../platform/db/schema/index.js';

import { configValueProblem, configValueSchema } from './config-values.js';
import { createSettingsRepo } from './repo.js';
import { SettingErrors, SystemConfigErrors } from './errors.js';
import type { CreateSettingBody, PutSettingBody } from './schemas.js';

/**
 * How long a node keeps a config value it read, should the message that a change was made get lost
 * (a change reaches every node's cache at once: see updateConfig).
 */
const CONFIG_LOCAL_MS = 10_000;

/** Operator settings (created, replaced, deleted) and the pre-seeded system config (update only). */
export function createSettingsService(deps: { db: Kysely<Schema>; log: FastifyBaseLogger; caches: Caches }) {
  const repo = createSettingsRepo(deps.db);
  // Some values are read on every GPS write; each node keeps them, and forgets one when any node changes it.
  const configCache = deps.caches.define<{ value: unknown }>('system-config', {
    sharedTtlSecs: 300,
    localTtlMs: CONFIG_LOCAL_MS,
  });

  async function readConfigValue(key: string, fallback: unknown): Promise<unknown> {
    const entry = await configCache.get(key, async () => {
      const stored = await repo.getConfig(key);
      return stored && { value: stored.value };
    });
    if (entry === undefined) return fallback;
    const problem = configValueProblem(key, entry.value);
    if (!problem) return entry.value;
    deps.log.warn({ key, problem }, 'stored system config value has the wrong shape; using the default');
    return fallback;
  }

  return {
    list: () => repo.list(),
    listPublic: () => repo.list(true),

    async get(key: string) {
      const setting = await repo.get(key);
      if (!setting) throw SettingErrors.not_found();
      return setting;
    },

    async create({ key, ...fields }: Static<typeof CreateSettingBody>) {
      const created = await repo.insert(key, fields);
      if (!created) throw SettingErrors.exists(`Setting '${key}' already exists`);
      return created;
    },

    /** PUT: replaces the setting, or creates it; tells which. */
    async put(key: string, fields: Static<typeof PutSettingBody>) {
      const { created, ...setting } = await repo.upsert(key, fields);
      return { setting, created };
    },

    async remove(key: string) {
      if (!(await repo.delete(key))) throw SettingErrors.not_found();
    },

    listConfig: async (prefix?: string) => (await repo.listConfig(prefix)).map(withValueSchema),

    async getConfig(key: string) {
      const entry = await repo.getConfig(key);
      if (!entry) throw SystemConfigErrors.not_found();
      return withValueSchema(entry);
    },

    /** A config value for the service's own use; the fallback when the entry is missing or its value is not of the entry's shape. */
    async configValue<T>(key: string, fallback: T): Promise<T> {
      return (await readConfigValue(key, fallback)) as T;
    },

    async updateConfig(key: string, value: unknown) {
      const problem = configValueProblem(key, value);
      if (problem) throw SystemConfigErrors.invalid_value(problem);
      const entry = await repo.updateConfig(key, value);
      if (!entry) throw SystemConfigErrors.not_found();
      // Every node forgets it before the change is answered (reads that started before it too).
      await configCache.invalidate([key]);
      return withValueSchema(entry);
    },
  };
}

/** A config entry as the API shows it: with the shape its value must have. */
const withValueSchema = <E extends { key: string }>(entry: E) => ({
  ...entry,
  value_schema: configValueSchema(entry.key),
});

export type SettingsService = ReturnType<typeof createSettingsService>;
