import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../app.js';
import { client } from '../../../test/client.js';
import { backend, freePort, openTestDatabase, testConfig } from '../../../test/helpers.js';
import { openKeyValueStore, type KeyValueStore } from './index.js';
import { BREAKER_FAILURES, BREAKER_OPEN_MS, COMMAND_TIMEOUT_MS } from './redis.js';

const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => resolve(true)).once('error', () => resolve(false));
    socket.once('close', () => socket.destroy());
    setTimeout(() => socket.end(), 50);
  });

// A Redis of its own (the binary CI installs), so it can be frozen with SIGSTOP and thawed with SIGCONT.
describe.runIf(backend === 'external' && process.env.TEST_REDIS_URL)('a frozen Redis', () => {
  let redis: ChildProcess;
  let kv: KeyValueStore;
  beforeAll(async () => {
    const port = await freePort();
    redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    for (let waited = 0; !(await listening(port)); waited += 50) {
      if (waited > 5000) throw new Error('redis-server did not start');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    kv = await openKeyValueStore({ kind: 'redis', url: `redis://127.0.0.1:${port}`, namespace: 'frozen:' });
    await kv.set('probe', '1', 60);
  });
  afterAll(async () => {
    redis.kill('SIGCONT');
    await kv?.close().catch(() => undefined);
    redis.kill('SIGKILL');
  });

  it('fails a command within the timeout instead of hanging, and works again once Redis thaws', async () => {
    redis.kill('SIGSTOP');
    const started = performance.now();
    await expect(kv.get('probe')).rejects.toThrow();
    expect(performance.now() - started).toBeLessThan(COMMAND_TIMEOUT_MS + 500);

    redis.kill('SIGCONT');
    await expect.poll(() => kv.get('probe').catch(() => 'failed'), { timeout: 5000 }).toBe('1');
  });

  it(`stops waiting for it after ${BREAKER_FAILURES} timeouts in a row: commands fail at once until a probe finds it back`, async () => {
    redis.kill('SIGSTOP');
    try {
      for (let i = 0; i < BREAKER_FAILURES; i++) await expect(kv.get('probe')).rejects.toThrow();
      const started = performance.now();
      await expect(kv.get('probe')).rejects.toThrow('unavailable');
      expect(performance.now() - started).toBeLessThan(50);
    } finally {
      redis.kill('SIGCONT');
    }
    await new Promise((resolve) => setTimeout(resolve, BREAKER_OPEN_MS));
    await expect.poll(() => kv.get('probe').catch(() => 'failed'), { timeout: 5000 }).toBe('1');
  });

  it("answers 503 where single use cannot be promised (an app assertion's nonce), at once, and recovers", async () => {
    const secret = 'frozen-redis-id-app-secret-0123456789';
    const database = await openTestDatabase();
    const app = await buildApp(testConfig({ internalAppSecrets: { id: secret } }), { database, kv }, { logger: false });
    const assertion = () => {
      const [subject, issuedAt, nonce] = [
        randomUUID(),
        String(Math.floor(Date.now() / 1000)),
        `idaa_${randomUUID().replaceAll('-', '')}`,
      ];
      const mac = createHmac('sha256', secret).update(`id|${subject}|${issuedAt}|${nonce}`).digest('base64url');
      return ['id', subject, issuedAt, nonce, mac].join('.');
    };
    const send = () =>
      client(app).post(
        '/v1/internal/audit',
        { event_type: 'consent_granted' },
        { headers: { 'x-id-app-key': secret, 'x-id-app-assertion': assertion() } },
      );
    try {
      redis.kill('SIGSTOP');
      const started = performance.now();
      const refused = await send();
      expect(refused.status).toBe(503);
      expect(refused.body).toMatchObject({ code: 'kv.unavailable' });
      // The rate limiter's count and the nonce each wait at most one command timeout.
      expect(performance.now() - started).toBeLessThan(3 * COMMAND_TIMEOUT_MS + 500);

      redis.kill('SIGCONT');
      await expect.poll(async () => (await send()).status, { timeout: 5000 }).not.toBe(503);
    } finally {
      redis.kill('SIGCONT');
      await app.close();
      await database.close();
    }
  });

  it('logs each kind of failure once, not once per request, while the store is out', async () => {
    const lines: { msg: string }[] = [];
    const stream = new PassThrough().on('data', (chunk: Buffer) =>
      lines.push(
        ...chunk
          .toString()
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line)),
      ),
    );
    const database = await openTestDatabase();
    const app = await buildApp(testConfig({ logLevel: 'warn' }), { database, kv }, { logger: { stream } });
    try {
      redis.kill('SIGSTOP');
      // Made-up tokens: each one asks the lookup counter, the credential cache and the rate limiter.
      for (let i = 0; i < 20; i++) {
        expect((await client(app, `wg_made_up_${i}_0123456789abcdef`).get('/v1/users/me')).status).toBe(401);
      }
      const counts = new Map<string, number>();
      for (const { msg } of lines) counts.set(msg, (counts.get(msg) ?? 0) + 1);
      expect(counts.size).toBeGreaterThan(0);
      for (const [message, count] of counts) expect({ message, count }).toEqual({ message, count: 1 });
    } finally {
      redis.kill('SIGCONT');
      await app.close();
      await database.close();
    }
  });
});
