import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backend } from './helpers.js';
import { cleanEnv, waitFor } from './processes.js';

const MAIN = join(import.meta.dirname, '..', 'dist', 'main.js');
const ADMIN = {
  BOOTSTRAP_ADMIN_EMAIL: 'keeper@example.org',
  BOOTSTRAP_ADMIN_USERNAME: 'keeper',
  BOOTSTRAP_ADMIN_PASSWORD: 'keeper-password-1',
};
const POINT = {
  latitude: 53.55,
  longitude: 9.99,
  altitude: 3,
  heading: 180,
  speed_kmh: 10,
  speed_mps: 2.78,
  speed_mph: 6.2,
  speed_knots: 5.4,
};

/** Runs the CLI to its end; resolves with its exit code and stderr. */
function cli(args: string[], env: Record<string, string>): Promise<{ status: number | null; stderr: string }> {
  const child = spawn(process.execPath, [MAIN, ...args], { env: { ...cleanEnv(), ...env } });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('exit', (status) => resolve({ status, stderr })));
}

/** A server on `dataDir`; resolves once it listens. */
async function serve(dataDir: string): Promise<{ child: ChildProcess; address: string }> {
  const env = { ...cleanEnv(), ...ADMIN, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', RATE_LIMIT_ENABLED: 'false' };
  const child = spawn(process.execPath, [MAIN, 'serve'], { env });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const address = await waitFor(() => /"address":"(http:[^"]+)"/.exec(output)?.[1], 120_000);
  return { child, address };
}

async function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.on('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

async function call(address: string, method: string, path: string, token?: string, body?: unknown) {
  const response = await fetch(`${address}${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

async function signIn(address: string): Promise<string> {
  const { body } = await call(address, 'POST', '/v1/auth/login', undefined, {
    identifier: 'keeper',
    password: ADMIN.BOOTSTRAP_ADMIN_PASSWORD,
  });
  return body.session_token as string;
}

// The backup commands are about the embedded database; they run once, on that back end.
describe.runIf(backend === 'embedded')('waygate backup and restore', { timeout: 300_000 }, () => {
  let work: string;
  beforeAll(() => {
    if (!existsSync(MAIN)) throw new Error('dist/main.js is missing: npm test builds it first');
    work = mkdtempSync(join(tmpdir(), 'waygate-backup-'));
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('backs up a running server under write load; the restore opens with every point acknowledged before it', async () => {
    const source = join(work, 'source');
    const file = join(work, 'snapshot.waygate-backup');
    const server = await serve(source);
    try {
      const token = await signIn(server.address);
      const { body: created } = await call(server.address, 'POST', '/v1/api-keys', token, {
        name: 'writer',
        scopes: ['gps:write'],
      });
      const key = created.key as string;

      // Points go on being written while the backup runs, one after another.
      const acknowledged: { id: string; at: number }[] = [];
      let writing = true;
      const writer = (async () => {
        while (writing) {
          const timestamp = 1767225600 + acknowledged.length;
          const { status, body } = await call(server.address, 'POST', '/v1/gps', key, { ...POINT, timestamp });
          expect(status).toBe(201);
          acknowledged.push({ id: body.data.id as string, at: Date.now() });
        }
      })();
      await waitFor(() => (acknowledged.length >= 20 ? true : undefined));

      const startedAt = Date.now();
      const backup = await cli(['backup', file], { DATA_DIR: source });
      const finishedAt = Date.now();
      writing = false;
      await writer;
      expect(backup).toMatchObject({ status: 0 });
      expect(backup.stderr).toMatch(/snapshot taken by the running server: [\d.]+ MB/);
      // It says that the key of secrets at rest is not in the file, and where it is.
      expect(backup.stderr).toContain(
        `is not in the backup: keep a copy of ${join(source, 'secret.key')} apart from it`,
      );
      // Owner-only, and nothing left beside it.
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(readdirSync(work).filter((name) => name.endsWith('.partial'))).toEqual([]);
      // The server kept answering writes while the snapshot was taken and written.
      expect(acknowledged.some((point) => point.at > startedAt && point.at < finishedAt)).toBe(true);
      const before = acknowledged.filter((point) => point.at < startedAt);

      // A backup never overwrites a file.
      expect(await cli(['backup', file], { DATA_DIR: source })).toMatchObject({
        status: 2,
        stderr: expect.stringContaining('exists already'),
      });
      await stop(server.child);

      const restoredDir = join(work, 'restored');
      const restore = await cli(['restore', file], { DATA_DIR: restoredDir });
      expect(restore).toMatchObject({ status: 0 });
      expect(await cli(['restore', file], { DATA_DIR: restoredDir })).toMatchObject({
        status: 2,
        stderr: expect.stringContaining('is not empty'),
      });
      // A DATA_DIR holding anything at all is refused, as documented: the database is not put beside it.
      const occupied = mkdtempSync(join(work, 'occupied-'));
      writeFileSync(join(occupied, 'secret.key'), 'another installation');
      expect(await cli(['restore', file], { DATA_DIR: occupied })).toEqual({
        status: 2,
        stderr: `waygate: ${occupied} is not empty (it holds secret.key); restore into a new, empty DATA_DIR, then copy the old secret.key beside the database (nothing was changed)\n`,
      });
      expect(readdirSync(occupied)).toEqual(['secret.key']);

      // Secrets at rest stay sealed with the old key: it goes with the restore, as the README says.
      cpSync(join(source, 'secret.key'), join(restoredDir, 'secret.key'));
      const restored = await serve(restoredDir);
      try {
        const restoredToken = await signIn(restored.address);
        expect(restoredToken).toEqual(expect.any(String));
        const found = await Promise.all(
          before.map((point) => call(restored.address, 'GET', `/v1/gps/${point.id}`, restoredToken)),
        );
        expect(found.map((answer) => answer.status)).toEqual(before.map(() => 200));
      } finally {
        await stop(restored.child);
      }
    } finally {
      if (server.child.exitCode === null) await stop(server.child);
    }
  });

  it('refuses a truncated, a corrupted or a foreign file and leaves the data directory untouched', async () => {
    const good = gzipSync(randomBytes(4096));
    const cases = {
      truncated: [good.subarray(0, good.length - 10), 'truncated or corrupted'],
      corrupted: [Buffer.from(good.map((byte, i) => (i === 2000 ? byte ^ 0xff : byte))), 'truncated or corrupted'],
      foreign: [good, 'is not a Waygate backup'],
    } as const;
    for (const [name, [bytes, message]] of Object.entries(cases)) {
      const file = join(work, `${name}.gz`);
      writeFileSync(file, bytes);
      const dataDir = join(work, `into-${name}`);
      const answer = await cli(['restore', file], { DATA_DIR: dataDir });
      expect(answer, name).toMatchObject({ status: 2, stderr: expect.stringContaining(message) });
      expect(existsSync(join(dataDir, 'pgdata', 'PG_VERSION')), name).toBe(false);
    }
    const notADirectory = join(work, 'a-file');
    writeFileSync(notADirectory, 'kept');
    expect(await cli(['restore', join(work, 'foreign.gz')], { DATA_DIR: notADirectory })).toMatchObject({
      status: 2,
      stderr: expect.stringContaining('is not a directory'),
    });
    expect(readFileSync(notADirectory, 'utf8')).toBe('kept');
  });

  it('refuses a FILE or FILE.partial that exists (a symlink planted in a shared folder included) and follows neither', async () => {
    const folder = mkdtempSync(join(work, 'shared-'));
    const theirs = join(work, 'another-accounts-file');
    writeFileSync(theirs, 'theirs');
    // A database to back up, so a backup that followed the symlink would write it there.
    const env = { DATA_DIR: join(work, 'small') };
    expect(await cli(['migrate'], env)).toMatchObject({ status: 0 });

    symlinkSync(theirs, join(folder, 'planted.partial'));
    const planted = await cli(['backup', join(folder, 'planted')], env);
    expect(planted).toEqual({
      status: 2,
      stderr: expect.stringContaining(`waygate: ${join(folder, 'planted.partial')} exists`),
    });
    expect(readFileSync(theirs, 'utf8')).toBe('theirs');

    const nowhere = join(work, 'would-be-created');
    symlinkSync(nowhere, join(folder, 'dangling.partial'));
    expect(await cli(['backup', join(folder, 'dangling')], env)).toMatchObject({ status: 2 });
    expect(existsSync(nowhere)).toBe(false);

    writeFileSync(join(folder, 'taken'), 'kept');
    const taken = await cli(['backup', join(folder, 'taken')], env);
    expect(taken).toEqual({
      status: 2,
      stderr: `waygate: ${join(folder, 'taken')} exists already; choose a new file name\n`,
    });
    expect(readFileSync(join(folder, 'taken'), 'utf8')).toBe('kept');
    symlinkSync(theirs, join(folder, 'linked'));
    expect(await cli(['backup', join(folder, 'linked')], env)).toMatchObject({
      status: 2,
      stderr: expect.stringContaining('exists already'),
    });

    // A refused backup leaves the folder as it was.
    expect(readdirSync(folder).sort()).toEqual(['dangling.partial', 'linked', 'planted.partial', 'taken']);
    expect(readFileSync(theirs, 'utf8')).toBe('theirs');
  });
});
