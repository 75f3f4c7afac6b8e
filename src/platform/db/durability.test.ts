import fs, { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { usesPostgres } from '../../../test/helpers.js';
import { openDatabase, type Database } from './database.js';

/** The embedded back end on a fresh data directory; the PostgreSQL project has nothing of its own to test here. */
// Opening a data directory on disk takes seconds (tens on a loaded machine).
describe.skipIf(usesPostgres)('embedded durability', { timeout: 120_000 }, () => {
  let database: Database | undefined;
  let dataDir: string | undefined;
  afterEach(async () => {
    vi.restoreAllMocks();
    await database?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    database = dataDir = undefined;
  });

  /** A fresh data directory, filled from the migrated template (an initdb would cost seconds). */
  async function open(durability?: 'durable' | 'relaxed'): Promise<Database> {
    dataDir = mkdtempSync(join(tmpdir(), 'waygate-durability-'));
    const loadDataDir = new Blob([readFileSync(inject('pgliteTemplate'))]);
    database = await openDatabase({ kind: 'embedded', dataDir, loadDataDir, ...(durability ? { durability } : {}) });
    return database;
  }

  async function setting(db: Database, name: 'fsync' | 'wal_sync_method' | 'synchronous_commit'): Promise<string> {
    const { rows } = await sql<Record<string, string>>`select current_setting(${name}) as value`.execute(db.db);
    return rows[0]!.value!;
  }

  /** How many times committing one row flushes a file to the disk. */
  async function flushesOfOneCommit(db: Database): Promise<number> {
    await sql`create table if not exists durability_probe (n int)`.execute(db.db);
    const fsync = vi.spyOn(fs, 'fsyncSync');
    await sql`insert into durability_probe values (1)`.execute(db.db);
    const calls = fsync.mock.calls.length;
    fsync.mockRestore();
    return calls;
  }

  it('is durable by default: fsync on, a commit reaches the disk before it returns and is there after a reopen', async () => {
    const db = await open();
    expect(await setting(db, 'fsync')).toBe('on');
    expect(await setting(db, 'wal_sync_method')).toBe('fsync');
    expect(await setting(db, 'synchronous_commit')).toBe('on');
    expect(await flushesOfOneCommit(db)).toBeGreaterThan(0);

    await db.close();
    database = undefined;
    database = await openDatabase({ kind: 'embedded', dataDir: dataDir! });
    const { rows } = await sql<{ n: number }>`select n from durability_probe`.execute(database.db);
    expect(rows).toEqual([{ n: 1 }]);
  });

  it('flushes nothing at commit only when EMBEDDED_DURABILITY=relaxed asks for it', async () => {
    const db = await open('relaxed');
    expect(await setting(db, 'fsync')).toBe('off');
    expect(await flushesOfOneCommit(db)).toBe(0);
  });
});
