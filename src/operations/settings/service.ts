import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Static } from 'typebox';
import type { Clock } from '../../platform/clock.js';
import type { Schema } from '../../platform/db/schema/index.js';

import { configValueProblem } from './config-values.js';
import { createSettingsRepo } from './repo.js';
import { SettingErrors, SystemConfigErrors } from './errors.js';
import type { CreateSettingBody, PutSettingBody } from './schemas.js';

/**
 * How long a node keeps a config value it read. A change takes effect at once on the node that made
 * it and within this time on the others.
 */
const CONFIG_MEMO_MS = 10_000;

/** Operator settings (created, replaced, deleted) and the pre-seeded system config (update only). */
export function createSettingsService(deps: { db: Kysely<Schema>; log: FastifyBaseLogger; clock: Clock }) {
  const repo = createSettingsRepo(deps.db);
  const configMemo = new Map<string, { value: Promise<unknown>; until: number }>();

  async function readConfigValue(key: string, fallback: unknown): Promise<unknown> {
    const entry = await repo.getConfig(key);
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

    listConfig: (prefix?: string) => repo.listConfig(prefix),

    async getConfig(key: string) {
      const entry = await repo.getConfig(key);
      if (!entry) throw SystemConfigErrors.not_found();
      return entry;
    },

    /**
     * A config value for the service's own use; the fallback when the entry is missing or its value
     * is not of the entry's shape. Remembered for CONFIG_MEMO_MS: some are read on every GPS write.
     */
    async configValue<T>(key: string, fallback: T): Promise<T> {
      const memo = configMemo.get(key);
      if (memo && memo.until > deps.clock.nowMs()) return (await memo.value) as T;
      // Concurrent callers share one read; an update made meanwhile drops it (see updateConfig).
      const value = readConfigValue(key, fallback);
      const entry = { value, until: deps.clock.nowMs() + CONFIG_MEMO_MS };
      configMemo.set(key, entry);
      value.catch(() => configMemo.get(key) === entry && configMemo.delete(key));
      return (await value) as T;
    },

    async updateConfig(key: string, value: unknown) {
      const problem = configValueProblem(key, value);
      if (problem) throw SystemConfigErrors.invalid_value(problem);
      const entry = await repo.updateConfig(key, value);
      if (!entry) throw SystemConfigErrors.not_found();
      // Reads that started before the change are forgotten with it.
      configMemo.delete(key);
      return entry;
    },
  };
}

export type SettingsService = ReturnType<typeof createSettingsService>;
