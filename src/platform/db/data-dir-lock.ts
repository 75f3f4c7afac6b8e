import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';

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

/** Who holds a lock: `<host> <pid>` (a lock of an older version holds the pid alone: this host's). */
function ownerOf(text: string): { host: string; pid: number } {
  const [first = '', second] = text.trim().split(/\s+/);
  return second === undefined ? { host: hostname(), pid: Number(first) } : { host: first, pid: Number(second) };
}

/**
 * One process per embedded data directory: PGlite has no lock of its own, and two processes writing
 * one directory corrupt it (or one never sees the other's writes). The lock file names the owner's
 * host and pid; a lock left by a process of this host that no longer runs (kill -9, a crash) is taken
 * over. A lock of another host (another container on a shared volume, where pids say nothing: every
 * container's server is pid 1) is never taken over: its owner cannot be checked from here. Returns the release.
 */
export function lockDataDir(dir: string): () => void {
  // Beside the directory, not in it: PostgreSQL's data directory is its own.
  const file = `${dir.replace(/\/+$/, '')}.lock`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, `${hostname()} ${process.pid}`, { flag: 'wx', mode: 0o600 });
      return () => rmSync(file, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = ownerOf(readFileSync(file, 'utf8'));
      if (owner.host !== hostname()) {
        throw new DataDirInUseError(
          `${dir} is locked by a Waygate process on host ${owner.host} (pid ${owner.pid}). If no process uses it any more ` +
            `(a container that was killed), delete ${file}; several servers need PostgreSQL (DATABASE_URL).`,
        );
      }
      if (Number.isInteger(owner.pid) && owner.pid > 0 && owner.pid !== process.pid && isRunning(owner.pid)) {
        throw new DataDirInUseError(
          `${dir} is in use by another Waygate process (pid ${owner.pid}). Stop it first; for admin tasks on a running ` +
            'server use its API (a super admin session or API key), or run the server on PostgreSQL (DATABASE_URL).',
        );
      }
      rmSync(file, { force: true });
    }
  }
  throw new DataDirInUseError(`${dir}: could not take the lock file ${file}`);
}
