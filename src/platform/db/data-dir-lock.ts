import { readFileSync, rmSync, writeFileSync } from 'node:fs';

export class DataDirInUseError extends Error {}

const isRunning = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else, which still means the directory is taken.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * One process per embedded data directory: PGlite has no lock of its own, and two processes writing
 * one directory corrupt it (or one never sees the other's writes). The lock file holds the owner's
 * pid; a lock left by a process that no longer runs (kill -9, a crash) is taken over. Returns the release.
 */
export function lockDataDir(dir: string): () => void {
  // Beside the directory, not in it: PostgreSQL's data directory is its own.
  const file = `${dir.replace(/\/+$/, '')}.lock`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx', mode: 0o600 });
      return () => rmSync(file, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = Number(readFileSync(file, 'utf8').trim());
      if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && isRunning(owner)) {
        throw new DataDirInUseError(
          `${dir} is in use by another Waygate process (pid ${owner}). Stop it first; for admin tasks on a running ` +
            'server use its API (a super admin session or API key), or run the server on PostgreSQL (DATABASE_URL).',
        );
      }
      rmSync(file, { force: true });
    }
  }
  throw new DataDirInUseError(`${dir}: could not take the lock file ${file}`);
}
