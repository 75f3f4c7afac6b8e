import { spawn, spawnSync } from 'node:child_process';
import { connect } from 'node:net';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backend } from './helpers.js';
import { cleanEnv, waitFor } from './processes.js';

const MAIN = join(import.meta.dirname, '..', 'dist', 'main.js');

function run(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [MAIN, ...args], { env: { ...cleanEnv(), ...env }, encoding: 'utf8', timeout: 60_000 });
}

// The CLI is the same on every back end; it runs once, on the embedded default.
// One data directory's life in order (migrate, admin create, serve): these tests are not shuffled.
// Each CLI run opens the embedded database in a new process (seconds on a busy machine), and some tests run
// two or three: they get more than the default 30 s.
describe.runIf(backend === 'embedded')('waygate CLI', { shuffle: false, timeout: 90_000 }, () => {
  let dataDir: string;
  beforeAll(() => {
    if (!existsSync(MAIN)) throw new Error('dist/main.js is missing: npm test builds it first');
    dataDir = mkdtempSync(join(tmpdir(), 'waygate-cli-'));
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('stops with one line naming a bad variable', () => {
    const result = run(['serve'], { PORT: 'eighty' });
    expect(result.status).toBe(2);
    expect(result.stderr).toBe('waygate: PORT must be an integer from 0 to 65535, got "eighty"\n');
  });

  it('prints its version', () => {
    const result = run(['--version']);
    expect({ status: result.status, stdout: result.stdout.trim() }).toEqual({ status: 0, stdout: JSON.parse(readFileSync(join(import.meta.dirname, '..', 'package.json'), 'utf8')).version });
  });

  it('refuses an unknown command', () => {
    const result = run(['frobnicate']);
    expect(result.status).toBe(2);
    expect(result.stderr.trim()).toBe('waygate: Unknown command "frobnicate". Run "waygate help" for the list.');
  });

  it('migrate applies the migrations once', () => {
    const first = run(['migrate'], { DATA_DIR: dataDir });
    expect(first.stderr).toBe('');
    expect(first.status).toBe(0);
    expect(first.stdout).toMatch(/^Applied migrations: 0001/);
    const second = run(['migrate'], { DATA_DIR: dataDir });
    expect(second.stdout.trim()).toBe('Database is up to date');
  });

  let adminId: string;
  let systemKey: string;

  it('admin create makes a super admin, and on a second run grants the existing user', () => {
    const args = ['admin', 'create', '--email', 'Boss@Example.org', '--username', 'boss', '--password', 'boss-password-1'];
    const first = run(args, { DATA_DIR: dataDir });
    expect(first.stderr).toBe('');
    expect(first.status).toBe(0);
    adminId = first.stdout.trim();
    expect(adminId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const again = run(args, { DATA_DIR: dataDir });
    expect(again.stdout.trim()).toBe(adminId);
  });

  it.each([
    [['admin', 'create', '--email', 'x@example.org'], 'waygate: admin create needs --email, --username and --password\n'],
    [['admin', 'create', '--email', 'x@example.org', '--username', 'x_y', '--password', 'short'], 'waygate: password must be at least 8 characters\n'],
    [['admin', 'create', '--bogus'], /^waygate: Unknown option '--bogus'/],
    [['system-key', 'rotate'], 'waygate: Usage: waygate system-key create [--name N]\n'],
  ])('refuses %j with one line and exit code 2', (args, message) => {
    const result = run(args, { DATA_DIR: dataDir });
    expect(result.status).toBe(2);
    if (typeof message === 'string') expect(result.stderr).toBe(message);
    else expect(result.stderr).toMatch(message);
  });

  it('system-key create prints a new key once', () => {
    const result = run(['system-key', 'create', '--name', 'ci'], { DATA_DIR: dataDir });
    expect(result.status).toBe(0);
    systemKey = result.stdout.trim();
    expect(systemKey).toMatch(/^wg_[A-Za-z0-9_-]{43}$/);
  });

  it('oauth rotate-signing-key adds a key and says when it starts signing', () => {
    const result = run(['oauth', 'rotate-signing-key'], { DATA_DIR: dataDir });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^New signing key [A-Za-z0-9_-]{43}: published now, signing from \d{4}-\d\d-\d\dT[\d:.]+Z\n$/);
    expect(run(['oauth', 'rotate'], { DATA_DIR: dataDir }).status).toBe(2);
  });

  it('jobs run runs a scheduled job now and prints its result; an unknown name is a usage error', () => {
    const result = run(['jobs', 'run', 'gps-retention'], { DATA_DIR: dataDir });
    expect(result.status).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ retention_days: null, partitions_dropped: 0, points_deleted: 0 });
    expect(result.stderr).toMatch(/waygate: gps-retention succeeded in \d+ ms\n$/);
    const unknown = run(['jobs', 'run', 'no-such-job'], { DATA_DIR: dataDir });
    expect([unknown.status, unknown.stderr]).toEqual([2, 'waygate: No scheduled job is named "no-such-job"; "waygate jobs list" lists them\n']);
  });

  it('serve listens, answers, and exits 0 on SIGTERM after closing everything', async () => {
    const child = spawn(process.execPath, [MAIN, 'serve'], {
      env: { ...cleanEnv(), DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' },
    });
    const lines: Record<string, unknown>[] = [];
    let buffered = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const parts = buffered.split('\n');
      buffered = parts.pop()!;
      lines.push(...parts.filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>));
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));

    const address = await waitFor(() => lines.find((line) => typeof line.address === 'string')?.address as string);
    const health = await fetch(`${address}/health`);
    expect(health.status).toBe(200);
    expect(((await health.json()) as { services: { database: { status: string } } }).services.database.status).toBe('up');

    const signIn = await fetch(`${address}/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ identifier: 'boss@example.org', password: 'boss-password-1' }),
    });
    expect(signIn.status).toBe(200);
    expect(((await signIn.json()) as { user_id: string }).user_id).toBe(adminId);
    const withSystemKey = await fetch(`${address}/v1/roles`, { headers: { authorization: `Bearer ${systemKey}` } });
    expect(withSystemKey.status).toBe(403);
    expect(await withSystemKey.json()).toEqual({ error: 'Forbidden', message: 'System key not permitted on this route', code: 'auth.system_key_not_permitted' });

    // One owner per data directory: a CLI command against it refuses, saying why, instead of writing behind the server's back.
    const meanwhile = run(['admin', 'create', '--email', 'late@example.org', '--username', 'late', '--password', 'late-password-1'], { DATA_DIR: dataDir });
    expect(meanwhile.status).toBe(2);
    expect(meanwhile.stderr).toMatch(/is in use by another Waygate process \(pid \d+\)/);
    // A scheduled job, though, runs in the server (asked through its socket), once across nodes as always.
    const job = run(['jobs', 'run', 'purge-expired'], { DATA_DIR: dataDir });
    expect([job.status, job.stderr]).toEqual([0, expect.stringMatching(/^waygate: purge-expired succeeded in \d+ ms\n$/)]);
    expect(JSON.parse(job.stdout)).toMatchObject({ sessions: expect.any(Number), deleted_users: 0 });
    // Written owner-only.
    expect(statSync(join(dataDir, 'pgdata')).mode & 0o077).toBe(0);

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(existsSync(join(dataDir, 'pgdata.lock'))).toBe(false);
    expect(lines.map((line) => line.msg)).toEqual(
      expect.arrayContaining(['shutting down: finishing in-flight requests', 'stopped']),
    );
    const requestLine = lines.find((line) => line.route === '/health');
    expect(requestLine).toMatchObject({ method: 'GET', status: 200, request_id: expect.any(String) });
  });

  it('npm start hands SIGTERM to the server (no orphaned node process under a process manager)', async () => {
    const npm = spawn('npm', ['start', '--ignore-scripts'], {
      cwd: join(import.meta.dirname, '..'),
      env: { ...cleanEnv(), DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' },
    });
    let output = '';
    npm.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => npm.on('exit', resolve));
    const address = await waitFor(() => /"address":"(http:[^"]+)"/.exec(output)?.[1]);
    npm.kill('SIGTERM');
    await exited;
    await waitFor(() => (output.includes('"msg":"stopped"') ? true : undefined), 10_000);
    const after = await fetch(`${address}/v1`).then(() => 'answered', (err: { cause?: { code?: string } }) => err.cause?.code);
    expect(after).toBe('ECONNREFUSED');
  });

  it('on SIGTERM under keep-alive load, answers or refuses every request and resets none', async () => {
    const child = spawn(process.execPath, [MAIN, 'serve'], {
      env: { ...cleanEnv(), DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', RATE_LIMIT_ENABLED: 'false', SHUTDOWN_TIMEOUT_SECS: '5' },
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const address = await waitFor(() => /"address":"(http:[^"]+)"/.exec(output)?.[1]);

    // Clients on keep-alive connections (fetch's default agent) sending back to back until refused.
    const outcomes: string[] = [];
    const client = async () => {
      for (;;) {
        try {
          const response = await fetch(`${address}/v1`);
          await response.arrayBuffer();
          outcomes.push(String(response.status));
        } catch (err) {
          const code = ((err as { cause?: { code?: string } }).cause?.code) ?? String(err);
          outcomes.push(code);
          if (code === 'ECONNREFUSED') return;
        }
      }
    };
    const clients = Array.from({ length: 16 }, client);
    await waitFor(() => (outcomes.length > 200 ? true : undefined));
    child.kill('SIGTERM');
    await Promise.all(clients);

    expect(await exited).toBe(0);
    const counts = outcomes.reduce<Record<string, number>>((all, outcome) => ({ ...all, [outcome]: (all[outcome] ?? 0) + 1 }), {});
    expect(Object.keys(counts).sort()).toEqual(expect.arrayContaining(['200', 'ECONNREFUSED']));
    // Nothing but answers (200 before, 503 during the drain) and refused new connections after.
    expect(Object.keys(counts).filter((outcome) => !['200', '503', 'ECONNREFUSED'].includes(outcome))).toEqual([]);
  });
  /** Starts `serve` and opens a WebSocket that upgrades and then never says a word (a phone that lost its network). */
  async function serveWithSilentWebSocket(env: Record<string, string>) {
    const child = spawn(process.execPath, [MAIN, 'serve'], {
      env: { ...cleanEnv(), DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', ...env },
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const address = new URL(await waitFor(() => /"address":"(http:[^"]+)"/.exec(output)?.[1]));
    const socket = connect(Number(address.port), address.hostname);
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    socket.write(
      `GET /v1/ws HTTP/1.1\r\nHost: ${address.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
    );
    // Upgraded and greeted: the connection is in the hub.
    await waitFor(() => (received.startsWith('HTTP/1.1 101') && received.includes('Welcome') ? true : undefined));
    return { child, exited, socket, output: () => output };
  }

  it('with a WebSocket client that never answers the close frame, exits 0 within SHUTDOWN_TIMEOUT_SECS + 1 s', async () => {
    const { child, exited, socket } = await serveWithSilentWebSocket({ SHUTDOWN_TIMEOUT_SECS: '2' });
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    const started = performance.now();
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(performance.now() - started).toBeLessThan(3000);
    await closed;
  }, 60_000);

  it('takes the same signal twice within milliseconds (npm forwarding it) as one, and a later one as "exit now"', async () => {
    const { child, exited, socket, output } = await serveWithSilentWebSocket({ SHUTDOWN_TIMEOUT_SECS: '3' });
    // What a signal to the process group of `npm start` does: node gets it directly and from npm.
    child.kill('SIGINT');
    child.kill('SIGINT');
    await waitFor(() => (output().includes('shutting down') ? true : undefined));
    // The drain went on (the silent client holds it until the deadline) and the repeat did not end it...
    expect(output()).not.toContain('second signal');
    // ...an operator's signal a second later does.
    await new Promise((resolve) => setTimeout(resolve, 900));
    child.kill('SIGINT');
    expect(await exited).toBe(1);
    expect(output()).toContain('second signal: exiting at once');
    socket.destroy();
  }, 60_000);
});
