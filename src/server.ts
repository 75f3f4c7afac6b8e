import { join } from 'node:path';
import type { Config } from './config.js';
import { openDatabase, type Database } from './platform/db/database.js';
import { migrate } from './platform/db/migrate.js';
import { openKeyValueStore, type KeyValueStore } from './platform/kv/index.js';
import { createSecretBox, keyFilePath, verifySecretKey } from './platform/secret-box.js';

export const embeddedDataDir = (config: Config) => join(config.dataDir, 'pgdata');

/** Where the key of secrets at rest comes from, for messages. */
export const keySourceOf = (config: Config) =>
  config.secretKey ? 'SECRET_KEY' : `${keyFilePath(config.dataDir)} (SECRET_KEY is unset)`;

/** Opens the configured database (embedded under DATA_DIR unless DATABASE_URL is set). */
export function openConfiguredDatabase(config: Config): Promise<Database> {
  return config.databaseUrl
    ? openDatabase({ kind: 'postgres', url: config.databaseUrl, poolSize: config.databasePoolSize })
    : openDatabase({
        kind: 'embedded',
        dataDir: embeddedDataDir(config),
        sharedBuffers: config.embeddedSharedBuffers,
        durability: config.embeddedDurability,
      });
}

export function openConfiguredKeyValueStore(config: Config): Promise<KeyValueStore> {
  return config.redisUrl
    ? openKeyValueStore({ kind: 'redis', url: config.redisUrl, namespace: config.redisPrefix })
    : openKeyValueStore({ kind: 'memory' });
}

/**
 * Opens the database and applies pending migrations; returns the versions applied. Then checks the key of
 * secrets at rest, unless `checkKey` is false (`waygate secrets reset`, which replaces what a lost key sealed).
 */
export async function openMigratedDatabase(
  config: Config,
  { checkKey = true } = {},
): Promise<{ database: Database; applied: string[] }> {
  const database = await openConfiguredDatabase(config);
  try {
    const applied = await migrate(database.db);
    if (checkKey)
      await verifySecretKey(database.db, createSecretBox(config.secretKey, config.dataDir), keySourceOf(config));
    return { database, applied };
  } catch (error) {
    await database.close();
    throw error;
  }
}
