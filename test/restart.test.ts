import { createHmac, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { SIGN_IN_POLICY } from '../src/identity/sign-in-throttle/service.js';
import { openDatabase, type Database } from '../src/platform/db/database.js';
import type { KeyValueStore } from '../src/platform/kv/index.js';
import { embeddedDataDir, openConfiguredKeyValueStore, openMigratedDatabase } from '../src/server.js';
import { createTestClock } from './clock.js';
import { client } from './client.js';
import { backend, createUser, testConfig } from './helpers.js';

const APP_SECRETS = { id: 'id-app-secret-for-restart-tests-01' };
const LOCKED = {
  error: 'TooManyRequests',
  message: 'Too many failed sign-in attempts; try again later',
  code: 'sign_in.locked_out',
};

/**
 * The embedded default (PGlite under DATA_DIR, no Redis) stopped and started again on the same DATA_DIR:
 * the security state that must outlive a restart (sign-in locks and their failure counts, used TOTP codes,
 * used app-assertion nonces) is still in force, although the in-process store starts empty.
 */
describe.skipIf(backend !== 'embedded')('a restart of the embedded server', { timeout: 180_000 }, () => {
  const config = testConfig({ internalAppSecrets: APP_SECRETS });
  // Frozen a minute into a 15-minute failure window, so every failure of the test counts in one window.
  const clock = createTestClock();
  const windowMs = SIGN_IN_POLICY.windowSecs * 1000;
  const start = Math.floor(Date.now() / windowMs) * windowMs + 60_000;
  clock.freeze(new Date(start));

  let database: Database;
  let kv: KeyValueStore;
  let app: FastifyInstance;
  const boot = async (opened: Database) => {
    database = opened;
    kv = await openConfiguredKeyValueStore(config);
    app = await buildApp(config, { database, kv, clock }, { logger: false, scheduledJobs: false });
  };
  /** Stops the server as `waygate serve` stops, and starts it again on the same DATA_DIR as `serve` starts. */
  const restart = async () => {
    await app.close();
    await Promise.all([kv.close(), database.close()]);
    await boot((await openMigratedDatabase(config)).database);
  };
  beforeAll(async () => {
    // The first start loads the migrated template into DATA_DIR (an initdb would cost seconds); restarts open it as `serve` does.
    await boot(
      await openDatabase({
        kind: 'embedded',
        dataDir: embeddedDataDir(config),
        loadDataDir: new Blob([readFileSync(inject('pgliteTemplate'))]),
      }),
    );
  });
  afterAll(async () => {
    await app.close();
    await Promise.all([kv.close(), database.close()]);
  });

  let ip = 0;
  const signIn = (identifier: string, password: string) =>
    client(app).post('/v1/auth/login', { identifier, password }, { remoteAddress: `10.7.0.${++ip}` });
  const codeAt = (secret: string, offsetSteps: number) =>
    generate({ secret, epoch: Math.floor(clock.nowMs() / 1000) + offsetSteps * 30 });
  const assertion = (subject: string) => {
    const issuedAt = String(Math.floor(clock.nowMs() / 1000));
    const nonce = `idaa_${randomUUID().replaceAll('-', '')}`;
    const mac = createHmac('sha256', APP_SECRETS.id).update(`id|${subject}|${issuedAt}|${nonce}`).digest('base64url');
    return ['id', subject, issuedAt, nonce, mac].join('.');
  };
  const audit = (header: string) =>
    client(app).post(
      '/v1/internal/audit',
      { event_type: 'consent_granted' },
      { headers: { 'x-id-app-key': APP_SECRETS.id, 'x-id-app-assertion': header } },
    );

  it('keeps sign-in locks with their remaining time, failure counts, used TOTP codes and used assertion nonces', async () => {
    // A locked account, an account one failure short of its lock.
    const locked = await createUser(app);
    for (let i = 0; i < SIGN_IN_POLICY.maxFailuresPerIdentifier; i++)
      expect((await signIn(locked.username, 'wrong password')).status).toBe(401);
    const before = await signIn(locked.username, locked.password);
    expect({ status: before.status, body: before.body, retryAfter: before.headers['retry-after'] }).toEqual({
      status: 429,
      body: LOCKED,
      retryAfter: String(SIGN_IN_POLICY.lockSecs),
    });
    const counted = await createUser(app);
    for (let i = 0; i < SIGN_IN_POLICY.maxFailuresPerIdentifier - 1; i++)
      expect((await signIn(counted.username, 'wrong password')).status).toBe(401);

    // A user with two-factor sign-in who has just signed in with the code of the next step.
    const withTotp = await createUser(app);
    const totpUser = client(app, withTotp.token);
    const { secret } = (await totpUser.post('/v1/users/me/2fa/setup', {}).expect(200)).body;
    expect((await totpUser.post('/v1/users/me/2fa/verify', { code: await codeAt(secret, 0) })).status).toBe(200);
    const usedCode = await codeAt(secret, 1);
    const verifyWith = async (code: string) => {
      const challenge = await signIn(withTotp.username, withTotp.password).expect(200);
      expect(challenge.body.requires_2fa).toBe(true);
      return client(app).post('/v1/auth/2fa/verify', { temp_token: challenge.body.temp_token!, code });
    };
    expect((await verifyWith(usedCode)).status).toBe(200);

    // An internal app's assertion, used once.
    const header = assertion(withTotp.id);
    expect((await audit(header)).status).toBe(201);

    await restart();

    const after = await signIn(locked.username, locked.password);
    expect({ status: after.status, body: after.body, retryAfter: after.headers['retry-after'] }).toEqual({
      status: 429,
      body: LOCKED,
      retryAfter: String(SIGN_IN_POLICY.lockSecs),
    });
    // The tenth failure in the window locks: the nine before the restart still count.
    expect((await signIn(counted.username, 'wrong password')).status).toBe(401);
    expect((await signIn(counted.username, counted.password)).body).toEqual(LOCKED);
    const replayedCode = await verifyWith(usedCode);
    expect({ status: replayedCode.status, body: replayedCode.body }).toEqual({
      status: 401,
      body: { error: 'Unauthorized', message: 'Invalid two-factor code', code: 'two_factor.wrong_sign_in_code' },
    });
    const replayed = await audit(header).expect(401);
    expect(replayed.body.code).toBe('app_assertion.replayed');
    expect((await audit(assertion(withTotp.id))).status).toBe(201);

    // The lock runs out when it would have without the restart.
    clock.advance(5 * 60_000);
    expect((await signIn(locked.username, locked.password)).headers['retry-after']).toBe(
      String(SIGN_IN_POLICY.lockSecs - 300),
    );
    clock.advance(SIGN_IN_POLICY.lockSecs * 1000 - 5 * 60_000);
    expect((await signIn(locked.username, locked.password)).status).toBe(200);
  });
});
