import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backend } from './helpers.js';
import { cleanEnv, waitFor } from './processes.js';

const MAIN = join(import.meta.dirname, '..', 'dist', 'main.js');

function run(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [MAIN, ...args], {
    env: { ...cleanEnv(), ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
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
    expect({ status: result.status, stdout: result.stdout.trim() }).toEqual({
      status: 0,
      stdout: JSON.parse(readFileSync(join(import.meta.dirname, '..', 'package.json'), 'utf8')).version,
    });
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
    const args = [
      'admin',
      'create',
      '--email',
      'Boss@Example.org',
      '--username',
      'boss',
      '--password',
      'boss-password-1',
    ];
    const first = run(args, { DATA_DIR: dataDir });
    expect(first.stderr).toBe('');
    expect(first.status).toBe(0);
    adminId = first.stdout.trim();
    expect(adminId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const again = run(args, { DATA_DIR: dataDir });
    expect(again.stdout.trim()).toBe(adminId);
  });

  it.each([
    [
      ['admin', 'create', '--email', 'x@example.org'],
      'waygate: admin create needs --email, --username and --password\n',
    ],
    [
      ['admin', 'create', '--email', 'x@example.org', '--username', 'x_y', '--password', 'short'],
      'waygate: password must be at least 8 characters\n',
    ],
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
    expect(result.stdout).toMatch(
      /^New signing key [A-Za-z0-9_-]{43}: published now, signing from \d{4}-\d\d-\d\dT[\d:.]+Z\n$/,
    );
    expect(run(['oauth', 'rotate'], { DATA_DIR: dataDir }).status).toBe(2);
  });

  it('jobs run runs a scheduled job now and prints its result; an unknown name is a usage error', () => {
    const result = run(['jobs', 'run', 'gps-retention'], { DATA_DIR: dataDir });
    expect(result.status).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ retention_days: null, partitions_dropped: 0, points_deleted: 0 });
    expect(result.stderr).toMatch(/waygate: gps-retention succeeded in \d+ ms\n$/);
    const unknown = run(['jobs', 'run', 'no-such-job'], { DATA_DIR: dataDir });
    expect([unknown.status, unknown.stderr]).toEqual([
      2,
      'waygate: No scheduled job is named "no-such-job"; "waygate jobs list" lists them\n',
    ]);
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
    expect(((await health.json()) as { services: { database: { status: string } } }).services.database.status).toBe(
      'up',
    );

    const signIn = await fetch(`${address}/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ identifier: 'boss@example.org', password: 'boss-password-1' }),
    });
    expect(signIn.status).toBe(200);
    expect(((await signIn.json()) as { user_id: string }).user_id).toBe(adminId);
    const withSystemKey = await fetch(`${address}/v1/roles`, { headers: { authorization: `Bearer ${systemKey}` } });
    expect(withSystemKey.status).toBe(403);
    expect(await withSystemKey.json()).toEqual({
      error: 'Forbidden',
      message: 'System key not permitted on this route',
      code: 'auth.system_key_not_permitted',
    });

    // One owner per data directory: a CLI command against it refuses, saying why, instead of writing behind the server's back.
    const meanwhile = run(
      ['admin', 'create', '--email', 'late@example.org', '--username', 'late', '--password', 'late-password-1'],
      { DATA_DIR: dataDir },
    );
    expect(meanwhile.status).toBe(2);
    expect(meanwhile.stderr).toMatch(/is in use by another Waygate process \(pid \d+\)/);
    // A scheduled job, though, runs in the server (asked through its socket), once across nodes as always.
    const job = run(['jobs', 'run', 'purge-expired'], { DATA_DIR: dataDir });
    expect([job.status, job.stderr]).toEqual([
      0,
      expect.stringMatching(/^waygate: purge-expired succeeded in \d+ ms\n$/),
    ]);
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
    const after = await fetch(`${address}/v1`).then(
      () => 'answered',
      (err: { cause?: { code?: string } }) => err.cause?.code,
    );
    expect(after).toBe('ECONNREFUSED');
  });

  it('on SIGTERM under keep-alive load, answers or refuses every request and resets none', async () => {
    const child = spawn(process.execPath, [MAIN, 'serve'], {
      env: {
        ...cleanEnv(),
        DATA_DIR: dataDir,
        PORT: '0',
        HOST: '127.0.0.1',
        RATE_LIMIT_ENABLED: 'false',
        SHUTDOWN_TIMEOUT_SECS: '5',
      },
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
          const code = (err as { cause?: { code?: string } }).cause?.code ?? String(err);
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
    const counts = outcomes.reduce<Record<string, number>>(
      (all, outcome) => ({ ...all, [outcome]: (all[outcome] ?? 0) + 1 }),
      {},
    );
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

describe.runIf(backend === 'embedded')('waygate secrets reset', { timeout: 300_000 }, () => {
  const keeper = { email: 'keeper@example.org', username: 'keeper', password: 'keeper-password-1' };

  const running: ChildProcess[] = [];
  afterAll(() => running.forEach((child) => child.exitCode === null && child.kill('SIGKILL')));

  /** A server on `dataDir`, with a JSON caller; `stop` ends it. */
  async function serveOn(dataDir: string) {
    const child = spawn(process.execPath, [MAIN, 'serve'], {
      env: { ...cleanEnv(), DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', RATE_LIMIT_ENABLED: 'false' },
    });
    running.push(child);
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const address = await waitFor(() => /"address":"(http:[^"]+)"/.exec(output)?.[1], 120_000);
    const call = async (method: string, path: string, token?: string, body?: unknown) => {
      const response = await fetch(`${address}${path}`, {
        method,
        headers: {
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(body ? { 'content-type': 'application/json' } : {}),
        },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      return { status: response.status, body: (await response.json()) as Record<string, any> };
    };
    const stop = async () => {
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    };
    return { call, stop };
  }

  it('after secret.key is lost the server refuses to start; the reset forgets 2FA and the signing keys, audited, and the service starts with its users and points', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'waygate-secrets-'));
    const env = { DATA_DIR: dataDir };
    try {
      expect(
        run(
          ['admin', 'create', '--email', keeper.email, '--username', keeper.username, '--password', keeper.password],
          env,
        ).status,
      ).toBe(0);
      const before = await serveOn(dataDir);
      const signIn = () =>
        before.call('POST', '/v1/auth/login', undefined, { identifier: keeper.username, password: keeper.password });
      const session = (await signIn()).body.session_token as string;
      const { body: setup } = await before.call('POST', '/v1/users/me/2fa/setup', session, {});
      expect(
        (
          await before.call('POST', '/v1/users/me/2fa/verify', session, {
            code: await generate({ secret: setup.secret as string }),
          })
        ).status,
      ).toBe(200);
      expect((await signIn()).body).toMatchObject({ requires_2fa: true });
      const { body: key } = await before.call('POST', '/v1/api-keys', session, {
        name: 'tracker',
        scopes: ['gps:write'],
      });
      const { status, body: point } = await before.call('POST', '/v1/gps', key.key as string, {
        latitude: 53.55,
        longitude: 9.99,
        altitude: 3,
        heading: 180,
        speed_kmh: 10,
        speed_mps: 2.78,
        speed_mph: 6.2,
        speed_knots: 5.4,
        timestamp: 1767225600,
      });
      expect(status).toBe(201);
      const kidsBefore = (await before.call('GET', '/v1/oauth/jwks')).body.keys.map((jwk: { kid: string }) => jwk.kid);
      expect(kidsBefore).toHaveLength(1);
      await before.stop();

      // The key is lost: a start makes a new one, which does not open the database's secrets.
      rmSync(join(dataDir, 'secret.key'));
      const refused = run(['serve'], { ...env, PORT: '0' });
      expect(refused.status).toBe(2);
      expect(refused.stderr).toContain(
        `waygate: ${join(dataDir, 'secret.key')} (SECRET_KEY is unset) is not the key this database's secrets were sealed with`,
      );
      expect(refused.stderr).toContain('"waygate secrets reset"');

      // Without a terminal to confirm on, only --yes does it.
      const unconfirmed = run(['secrets', 'reset'], env);
      expect(unconfirmed.status).toBe(2);
      expect(unconfirmed.stderr).toMatch(/Nothing was changed: run it on a terminal to confirm, or pass --yes\n$/);
      expect(run(['serve'], { ...env, PORT: '0' }).status).toBe(2);

      const reset = run(['secrets', 'reset', '--yes'], env);
      expect([reset.status, reset.stderr]).toEqual([0, '']);
      const aside = readdirSync(dataDir).filter((name) => name.startsWith('secret.key.'));
      expect(aside).toEqual([expect.stringMatching(/^secret\.key\.replaced-\d{4}-\d\d-\d\dT[\d-]+Z$/)]);
      expect(reset.stdout.split('\n')).toEqual([
        'Forgot: 1 2FA enrolments (and 0 setups under way), 1 OAuth signing keys, 0 integration tokens.',
        `Secrets are now sealed with ${join(dataDir, 'secret.key')}; the key it replaced is kept at ${join(dataDir, aside[0]!)}.`,
        'Users with 2FA sign in with their password and enrol again; integrations ask to be connected again.',
        'Keep a copy of the new key apart from the backups: it is not in them. Nodes sharing it need the new file.',
        '',
      ]);
      expect(statSync(join(dataDir, 'secret.key')).mode & 0o777).toBe(0o600);

      const after = await serveOn(dataDir);
      try {
        // The password alone signs in now; the point and the account are there, the OAuth keys are new.
        const { status: signedIn, body } = await after.call('POST', '/v1/auth/login', undefined, {
          identifier: keeper.username,
          password: keeper.password,
        });
        expect(signedIn).toBe(200);
        expect(body.requires_2fa).not.toBe(true);
        const token = body.session_token as string;
        expect((await after.call('GET', `/v1/gps/${point.data.id}`, token)).body.data).toMatchObject({
          id: point.data.id,
          latitude: 53.55,
        });
        const kidsAfter = (await after.call('GET', '/v1/oauth/jwks')).body.keys.map((jwk: { kid: string }) => jwk.kid);
        expect(kidsAfter).toHaveLength(1);
        expect(kidsAfter).not.toEqual(kidsBefore);
        const { body: resets } = await after.call('GET', '/v1/admin/audit?event_type=secrets_reset', token);
        expect(resets.events.map((event: Record<string, unknown>) => [event.event_type, event.metadata])).toEqual([
          [
            'secrets_reset',
            {
              two_factor_enrolments: 1,
              two_factor_setups: 0,
              oauth_signing_keys: 1,
              integration_tokens: 0,
              key: 'DATA_DIR/secret.key',
            },
          ],
        ]);
        const { body: own } = await after.call('GET', '/v1/users/me/audit?event_type=2fa_disabled', token);
        expect(own.events.map((event: Record<string, unknown>) => event.metadata)).toEqual([
          { reason: 'secrets_reset' },
        ]);
        // And 2FA can be set up again, sealed with the new key.
        expect((await after.call('POST', '/v1/users/me/2fa/setup', token, {})).status).toBe(200);
      } finally {
        await after.stop();
      }
    } finally {
      running.forEach((child) => child.exitCode === null && child.kill('SIGKILL'));
      rmSync(dataDir, { recursive: true, force: true, maxRetries: 5 });
    }
  });
});
