import { join } from 'node:path';
import type { Config } from './config.js';
import { openDatabase, type Database } from './platform/db/database.js';
import { migrate } from './platform/db/migrate.js';
import { openKeyValueStore, type KeyValueStore } from './platform/kv/index.js';
import { createSecretBox, verifySecretKey } from './platform/secret-box.js';

export const embeddedDataDir = (config: Config) => join(config.dataDir, 'pgdata');

/** Opens the configured database (embedded under DATA_DIR unless DATABASE_URL is set). */
export function openConfiguredDatabase(config: Config): Promise<Database> {
  return config.databaseUrl
    ? openDatabase({ kind: 'postgres', url: config.databaseUrl, poolSize: config.databasePoolSize })
    : openDatabase({ kind: 'embedded', dataDir: embeddedDataDir(config), sharedBuffers: config.embeddedSharedBuffers, durability: config.embeddedDurability });
}

export function openConfiguredKeyValueStore(config: Config): Promise<KeyValueStore> {
  return config.redisUrl
    ? openKeyValueStore({ kind: 'redis', url: config.redisUrl, namespace: config.redisPrefix })
    : openKeyValueStore({ kind: 'memory' });
}

/** Opens the database and applies pending migrations; returns the versions applied. */
export async function openMigratedDatabase(config: Config): Promise<{ database: Database; applied: string[] }> {
  const database = await openConfiguredDatabase(config);
  try {
    const applied = await migrate(database.db);
    const keySource = config.secretKey ? 'SECRET_KEY' : `${join(config.dataDir, 'secret.key')} (SECRET_KEY is unset)`;
    await verifySecretKey(database.db, createSecretBox(config.secretKey, config.dataDir), keySource);
    return { database, applied };
  } catch (error) {
    await database.close();
    throw error;
  }
}
