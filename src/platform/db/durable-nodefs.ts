import fs from 'node:fs';
import { NodeFS } from '@electric-sql/pglite/nodefs';

/**
 * PGlite's file system for a data directory on disk, with fsync that reaches the disk.
 *
 * PGlite runs PostgreSQL compiled to WebAssembly over Emscripten's NODEFS, which maps each file to a real
 * one but has no `fsync`: the `fsync()` PostgreSQL calls at commit returns success and flushes nothing, and
 * `fdatasync()` is a no-op in Emscripten whatever the file system. PGlite also starts PostgreSQL with `-F`
 * (fsync off). This adds the missing operation (`fs.fsyncSync` on the file's real descriptor; directories are
 * opened as files by NODEFS, so syncing a directory entry works too), and `durableStartParams` makes
 * PostgreSQL call it: no `-F`, `fsync=on` with `wal_sync_method=fsync`, the one method that goes through it.
 *
 * With `synchronous_commit=on` (PostgreSQL's default) a commit returns only after its WAL is on disk, so a
 * write answered 2xx survives a power cut. The GPS writer's group commit puts many points under one flush.
 */
export class DurableNodeFS extends NodeFS {
  override async init(...args: Parameters<NodeFS['init']>): ReturnType<NodeFS['init']> {
    const { emscriptenOpts } = await super.init(...args);
    const preRun = [...(emscriptenOpts.preRun ?? []), addFsync];
    return { emscriptenOpts: { ...emscriptenOpts, preRun } };
  }
}

/**
 * PGlite's start parameters made durable over `DurableNodeFS`. The explicit fast mode
 * (`EMBEDDED_DURABILITY=relaxed`) keeps PGlite's own (`-F`): commits are in the operating system's cache
 * when answered; a killed process loses nothing, a power cut may lose the last moments.
 */
export function durableStartParams(pgliteDefaults: readonly string[]): string[] {
  const settings = ['fsync=on', 'wal_sync_method=fsync', 'synchronous_commit=on'];
  return [...pgliteDefaults.filter((param) => param !== '-F'), ...settings.flatMap((setting) => ['-c', setting])];
}

interface SyncableStream {
  nfd?: number;
}

/** Emscripten's errno for EIO: PostgreSQL treats a failed fsync as fatal, as it must. */
const EIO = 29;

function addFsync(mod: { NODEFS: unknown; FS: unknown }): void {
  const nodefs = mod.NODEFS as { stream_ops: Record<string, unknown> };
  const { ErrnoError } = mod.FS as { ErrnoError: new (errno: number) => Error };
  nodefs.stream_ops.fsync = (stream: SyncableStream) => {
    if (stream.nfd === undefined) return 0;
    try {
      fs.fsyncSync(stream.nfd);
    } catch {
      throw new ErrnoError(EIO);
    }
    return 0;
  };
}
