import {
  closeSync,
  existsSync,
  fsyncSync,
  linkSync,
  lstatSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, get, request as httpRequest, type Server } from 'node:http';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { sql } from 'kysely';
import { openDatabase, type Database } from './database.js';

/**
 * Backups of the embedded database: a gzip'd tarball of its data directory, taken by PGlite while no
 * statement runs (`dumpDataDir` holds the query lock), after a checkpoint, so it is a consistent image
 * that opens without recovery. gzip's own CRC and length check every byte of it, so a truncated or
 * corrupted file is refused before anything is written. The snapshot is built in memory: an embedded
 * database of many gigabytes belongs on PostgreSQL (pg_dump and point-in-time recovery, see docs/production.md).
 *
 * While a server owns the data directory, the CLI asks it (for a backup, or to run a scheduled job) through a Unix socket beside the directory
 * (`DATA_DIR/pgdata.backup.sock`, owner-only like everything under DATA_DIR): whoever can read the socket could
 * read the database files themselves, so it needs no credential of its own.
 */
export class BackupError extends Error {}

export type Progress = (message: string) => void;

export const backupSocketPath = (dataDir: string) => `${dataDir.replace(/\/+$/, '')}.backup.sock`;

/** A consistent gzip'd snapshot of an open embedded database. */
export async function snapshot(database: Database): Promise<Buffer> {
  if (!database.dump)
    throw new BackupError('backups of a PostgreSQL server are made with pg_dump (see docs/production.md)');
  await sql`checkpoint`.execute(database.db);
  return Buffer.from(await (await database.dump('gzip')).arrayBuffer());
}

/** What `waygate jobs run` gets from the server: the job's record after the run, or why it did not run. */
export type JobRunAnswer =
  | { outcome: 'unknown' }
  | { outcome: 'running' }
  | {
      outcome: 'ran';
      job: {
        last_outcome: string | null;
        last_duration_ms: number | null;
        last_result: unknown;
        last_error: string | null;
      };
    };

/**
 * Serves snapshots on the backup socket while the server runs, and runs of scheduled jobs for `waygate jobs
 * run` (`POST /jobs/NAME/run`), which cannot open the directory the server owns; returns the close function.
 */
export function serveBackups(
  database: Database,
  dataDir: string,
  log: { error(obj: object, msg: string): void },
  runJob?: (name: string) => Promise<JobRunAnswer>,
): () => Promise<void> {
  const path = backupSocketPath(dataDir);
  rmSync(path, { force: true });
  const server: Server = createServer((request, response) => {
    const job = /^\/jobs\/([A-Za-z0-9_-]{1,100})\/run$/.exec(request.url ?? '');
    if (request.method === 'POST' && job && runJob) {
      runJob(job[1]!).then(
        (answer) => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer)),
        (err: unknown) =>
          response
            .writeHead(500, { 'content-type': 'text/plain' })
            .end(err instanceof Error ? err.message : 'the job could not run'),
      );
      return;
    }
    if (request.method !== 'GET' || request.url !== '/backup') {
      response.writeHead(404).end();
      return;
    }
    snapshot(database).then(
      (bytes) =>
        response.writeHead(200, { 'content-type': 'application/gzip', 'content-length': bytes.length }).end(bytes),
      (err: unknown) => {
        log.error({ err }, 'backup failed');
        response
          .writeHead(500, { 'content-type': 'text/plain' })
          .end(err instanceof Error ? err.message : 'backup failed');
      },
    );
  });
  // A socket that cannot be made (a path beyond the 107 bytes Unix sockets allow) costs the online backup,
  // never the server: `waygate backup` then says a server holds the directory.
  server.on('error', (err) => log.error({ err, path }, 'backup socket unavailable'));
  server.listen(path);
  return () =>
    new Promise((resolve) => {
      server.close(() => resolve());
      rmSync(path, { force: true });
    });
}

/** A snapshot from the server running on `dataDir`, or undefined when none answers on its socket. */
export function snapshotFromServer(dataDir: string): Promise<Buffer | undefined> {
  const socketPath = backupSocketPath(dataDir);
  if (!existsSync(socketPath)) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const request = get({ socketPath, path: '/backup' }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        const body = Buffer.concat(chunks);
        if (response.statusCode === 200) resolve(body);
        else
          reject(
            new BackupError(`the running server could not take the backup: ${body.toString('utf8').slice(0, 200)}`),
          );
      });
    });
    // A socket file left by a server that was killed: nobody listens, so the CLI opens the directory itself.
    request.on('error', (err: NodeJS.ErrnoException) =>
      err.code === 'ECONNREFUSED' || err.code === 'ENOENT' ? resolve(undefined) : reject(err),
    );
  });
}

/** Runs a job in the server running on `dataDir`; undefined when none answers on its socket. */
export function runJobOnServer(dataDir: string, name: string): Promise<JobRunAnswer | undefined> {
  const socketPath = backupSocketPath(dataDir);
  if (!existsSync(socketPath)) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { socketPath, method: 'POST', path: `/jobs/${encodeURIComponent(name)}/run` },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('error', reject);
        response.on('end', () => {
          if (response.statusCode === 200) resolve(JSON.parse(body) as JobRunAnswer);
          else reject(new BackupError(`the running server could not run ${name}: ${body.slice(0, 200)}`));
        });
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) =>
      err.code === 'ECONNREFUSED' || err.code === 'ENOENT' ? resolve(undefined) : reject(err),
    );
    req.end();
  });
}

/** A backup file being written: `finish` puts the snapshot under its name, `abandon` leaves nothing behind. */
export interface BackupTarget {
  finish(bytes: Buffer): void;
  abandon(): void;
}

/**
 * Claims `file` for a backup before the snapshot is taken: it must not exist, and the snapshot goes first to
 * `file.partial`, created exclusively and owner-only. So a name planted in a shared backup folder (a symlink at
 * `file.partial` pointing at another account's file) is refused instead of followed, and the database never
 * lands in a file someone else made or can read. The finished file takes its name by a hard link, which
 * fails when the name was taken meanwhile (a rename would replace it), so no half file and no overwrite.
 */
export function claimBackupFile(file: string): BackupTarget {
  if (lstatSync(file, { throwIfNoEntry: false }))
    throw new BackupError(`${file} exists already; choose a new file name`);
  const partial = `${file}.partial`;
  let fd: number;
  try {
    fd = openSync(partial, 'wx', 0o600);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST')
      throw new BackupError(
        `${partial} exists (a backup under way, one that failed, or a name someone else made); nothing was written: remove it or choose a new file name`,
      );
    throw new BackupError(`cannot create ${partial}: ${code ?? String(err)}`);
  }
  let open = true;
  const close = () => {
    if (open) closeSync(fd);
    open = false;
  };
  const abandon = () => {
    close();
    rmSync(partial, { force: true });
  };
  return {
    abandon,
    finish(bytes) {
      try {
        writeFileSync(fd, bytes);
        fsyncSync(fd);
        close();
        publish(partial, file);
      } catch (err) {
        abandon();
        throw err;
      }
    },
  };
}

/** Gives the finished partial file its final name, only while that name is free. */
function publish(partial: string, file: string): void {
  const taken = () => new BackupError(`${file} was created while the backup was written; nothing was overwritten`);
  try {
    linkSync(partial, file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw taken();
    // A file system without hard links (some network and FAT mounts): rename, after looking once more.
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS') throw err;
    if (lstatSync(file, { throwIfNoEntry: false })) throw taken();
    renameSync(partial, file);
    return;
  }
  unlinkSync(partial);
}

/** Reads and checks a backup file; refuses one that is truncated, corrupted or not a Waygate backup. */
export async function readBackupFile(file: string): Promise<Blob> {
  const bytes = await readFile(file).catch((err: NodeJS.ErrnoException) => {
    throw new BackupError(`cannot read ${file}: ${err.code ?? err.message}`);
  });
  let tar: Buffer;
  try {
    tar = gunzipSync(bytes);
  } catch {
    throw new BackupError(`${file} is truncated or corrupted (its gzip check fails); nothing was restored`);
  }
  if (!isDataDirectoryTar(tar))
    throw new BackupError(`${file} is not a Waygate backup (no PostgreSQL data directory in it)`);
  return new Blob([tar]);
}

/**
 * Restores a backup into `dataDir` (the database's directory inside `root`, DATA_DIR); DATA_DIR must be
 * missing or empty, since what it holds (a `secret.key`, an outbox) would belong to another database.
 * Checks that the result opens.
 */
export async function restoreBackup(
  file: string,
  into: { root: string; dataDir: string },
  progress: Progress,
): Promise<void> {
  const { root, dataDir } = into;
  const entry = statSync(root, { throwIfNoEntry: false });
  if (entry && !entry.isDirectory())
    throw new BackupError(`${root} is not a directory; restore into a new DATA_DIR (nothing was changed)`);
  const held = entry ? readdirSync(root) : [];
  if (held.length > 0) {
    throw new BackupError(
      `${root} is not empty (it holds ${held.slice(0, 3).join(', ')}${held.length > 3 ? ', …' : ''}); restore into a new, empty DATA_DIR, ` +
        'then copy the old secret.key beside the database (nothing was changed)',
    );
  }
  const loadDataDir = await readBackupFile(file);
  progress(`backup checked: ${megabytes(loadDataDir.size)} of database files`);
  try {
    const database = await openDatabase({ kind: 'embedded', dataDir, loadDataDir });
    await sql`select 1`.execute(database.db);
    await database.close();
  } catch (err) {
    rmSync(dataDir, { recursive: true, force: true });
    throw new BackupError(
      `the backup did not open as a database (${err instanceof Error ? err.message : String(err)}); nothing was restored`,
    );
  }
}

export const megabytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/**
 * Whether a tar holds a PostgreSQL data directory: some entry's name ends in PG_VERSION. Read from the
 * ustar headers by hand: one name in 512-byte blocks, where a tar library (tar-stream has no types) would
 * stream the whole archive through events for the same answer.
 */
function isDataDirectoryTar(tar: Buffer): boolean {
  const BLOCK = 512;
  for (let offset = 0; offset + BLOCK <= tar.length;) {
    const header = tar.subarray(offset, offset + BLOCK);
    if (header.every((byte) => byte === 0)) return false;
    if (header.toString('latin1', 257, 262) !== 'ustar') return false;
    const name = header.toString('utf8', 0, 100).replace(/\0.*$/s, '');
    const prefix = header.toString('utf8', 345, 500).replace(/\0.*$/s, '');
    if (join(prefix, name).endsWith('PG_VERSION')) return true;
    const size = parseInt(header.toString('latin1', 124, 136).replace(/\0.*$/s, '').trim() || '0', 8);
    offset += BLOCK + Math.ceil(size / BLOCK) * BLOCK;
  }
  return false;
}
