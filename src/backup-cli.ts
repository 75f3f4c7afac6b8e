import type { Config } from './config.js';
import {
  BackupError,
  claimBackupFile,
  megabytes,
  snapshot,
  snapshotFromServer,
  type Progress,
} from './platform/db/backup.js';
import { embeddedDataDirExists } from './platform/db/database.js';
import { keyFilePath } from './platform/secret-box.js';
import { embeddedDataDir, openConfiguredDatabase } from './server.js';

/** `waygate backup FILE`: claims FILE (refused when taken), then writes the snapshot into it. */
export async function backUpDataDir(config: Config, file: string, progress: Progress): Promise<void> {
  const target = claimBackupFile(file);
  let bytes: Buffer;
  try {
    bytes = await snapshotOfDataDir(config, progress);
  } catch (err) {
    target.abandon();
    throw err;
  }
  target.finish(bytes);
  progress(`backup written: ${file} (${megabytes(bytes.length)})`);
  const key = config.secretKey ? 'the value of SECRET_KEY' : `a copy of ${keyFilePath(config.dataDir)}`;
  progress(
    `the key of secrets at rest (2FA secrets, OAuth signing keys, integration tokens) is not in the backup: keep ${key} ` +
      'apart from it; a restore needs it (without it, "waygate secrets reset" makes those secrets anew)',
  );
}

/**
 * A snapshot of the embedded database for `waygate backup`: from the server that owns DATA_DIR when one
 * runs (it goes on serving; statements wait only while the files are copied), else by opening the
 * directory here (taking its lock, so no server can start meanwhile).
 */
export async function snapshotOfDataDir(config: Config, progress: Progress): Promise<Buffer> {
  if (config.databaseUrl)
    throw new BackupError('backup is for the embedded database; for PostgreSQL use pg_dump (see docs/production.md)');
  const dataDir = embeddedDataDir(config);
  if (!embeddedDataDirExists(dataDir)) throw new BackupError(`${dataDir} holds no database to back up`);
  const fromServer = await snapshotFromServer(dataDir);
  if (fromServer) {
    progress(`snapshot taken by the running server: ${megabytes(fromServer.length)}`);
    return fromServer;
  }
  const database = await openConfiguredDatabase(config);
  try {
    const bytes = await snapshot(database);
    progress(`snapshot taken: ${megabytes(bytes.length)}`);
    return bytes;
  } finally {
    await database.close();
  }
}
