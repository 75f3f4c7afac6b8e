import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DataDirInUseError, lockDataDir } from './data-dir-lock.js';

const dir = () => join(mkdtempSync(join(tmpdir(), 'waygate-lock-')), 'pgdata');

describe('data directory lock', () => {
  it('refuses a directory another live process holds, naming it', () => {
    const path = dir();
    // Another live process holds it.
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)']);
    try {
      writeFileSync(`${path}.lock`, String(other.pid));
      expect(() => lockDataDir(path)).toThrow(DataDirInUseError);
      expect(() => lockDataDir(path)).toThrow(`pid ${other.pid}`);
    } finally {
      other.kill();
    }
  });

  it('takes over a lock left by a process that no longer runs, and releases its own', async () => {
    const path = dir();
    const gone = spawn(process.execPath, ['-e', '']);
    await new Promise((resolve) => gone.on('exit', resolve));
    writeFileSync(`${path}.lock`, String(gone.pid));
    const release = lockDataDir(path);
    expect(readFileSync(`${path}.lock`, 'utf8')).toBe(`${hostname()} ${process.pid}`);
    release();
    expect(existsSync(`${path}.lock`)).toBe(false);
  });

  it('never takes over the lock of another host, whatever its pid (containers sharing a volume are all pid 1)', () => {
    const path = dir();
    writeFileSync(`${path}.lock`, `another-container ${process.pid}`);
    expect(() => lockDataDir(path)).toThrow(DataDirInUseError);
    expect(() => lockDataDir(path)).toThrow(`host another-container (pid ${process.pid})`);
    expect(readFileSync(`${path}.lock`, 'utf8')).toBe(`another-container ${process.pid}`);
  });
});
