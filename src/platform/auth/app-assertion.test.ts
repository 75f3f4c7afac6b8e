import { randomUUID, webcrypto } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestClock } from '../../../test/clock.js';
import { usesRedis } from '../../../test/helpers.js';
import { openKeyValueStore, type KeyValueStore } from '../kv/index.js';
import { ASSERTION_CLOCK_SKEW_SECS, createAppAssertionVerifier } from './app-assertion.js';

const SECRETS = { id: 'id-app-secret-0123456789abcdef', backend: 'backend-app-secret-0123456789ab' };
const TTL_SECS = 30;
const NOW = new Date('2026-11-25T12:00:00Z');
const nowSecs = NOW.getTime() / 1000;

/** Mints an assertion the way an app would, with WebCrypto rather than the service's node:crypto HMAC. */
async function mint(fields: {
  app?: string;
  subject?: string;
  issuedAt?: number;
  nonce?: string;
  secret?: string;
}): Promise<string> {
  const app = fields.app ?? 'id';
  const subject = fields.subject ?? randomUUID();
  const issuedAt = String(fields.issuedAt ?? nowSecs);
  const nonce = fields.nonce ?? `idaa_${randomUUID().replaceAll('-', '')}`;
  const key = await webcrypto.subtle.importKey(
    'raw',
    new TextEncoder().encode(fields.secret ?? SECRETS.id),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  const mac = await webcrypto.subtle.sign(
    'HMAC',
    key,
    new TextEncoder().encode(`${app}|${subject}|${issuedAt}|${nonce}`),
  );
  return [app, subject, issuedAt, nonce, Buffer.from(mac).toString('base64url')].join('.');
}

function openStore(namespace: string): Promise<KeyValueStore> {
  return usesRedis
    ? openKeyValueStore({ kind: 'redis', url: process.env.TEST_REDIS_URL!, namespace })
    : openKeyValueStore({ kind: 'memory' });
}

describe('X-ID-App-Assertion verifier', () => {
  const namespace = `test:${randomUUID()}:`;
  let kv: KeyValueStore;
  const clock = createTestClock();
  clock.freeze(NOW);
  const verifier = () => createAppAssertionVerifier({ secrets: SECRETS, ttlSecs: TTL_SECS, nonces: kv, clock });

  beforeAll(async () => {
    kv = await openStore(namespace);
  });
  afterAll(() => kv.close());

  const rejection = async (header: string) => {
    const error = await verifier()
      .verify(header)
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    return error && { status: (error as { status: number }).status, code: (error as { code: string }).code };
  };

  it('accepts a fresh assertion of a configured app and returns its app, subject and time', async () => {
    const subject = randomUUID();
    const result = await verifier().verify(await mint({ subject, secret: SECRETS.id }));
    expect(result).toEqual({ app: 'id', subject, issuedAt: NOW });
  });

  it('signs each app with its own secret', async () => {
    expect((await verifier().verify(await mint({ app: 'backend', secret: SECRETS.backend }))).app).toBe('backend');
    expect(await rejection(await mint({ app: 'backend', secret: SECRETS.id }))).toEqual({
      status: 401,
      code: 'app_assertion.bad_signature',
    });
  });

  it.each([
    ['an unknown app', { app: 'billing' }],
    ['an internal app without a secret', { app: 'policies' }],
  ])('rejects %s', async (_, fields) => {
    expect(await rejection(await mint(fields))).toEqual({ status: 401, code: 'app_assertion.unknown_app' });
  });

  it.each([
    ['four fields', async () => (await mint({})).split('.').slice(1).join('.')],
    ['six fields', async () => `${await mint({})}.extra`],
    ['a subject that is not a UUID', () => mint({ subject: 'not-a-uuid' })],
    ['a nonce without the idaa_ prefix', () => mint({ nonce: 'nonce_123' })],
    ['an issued_at that is not a number', async () => (await mint({})).replace(`.${nowSecs}.`, '.soon.')],
  ])('rejects %s as malformed', async (_, header) => {
    expect(await rejection(await header())).toEqual({ status: 401, code: 'app_assertion.malformed' });
  });

  it('checks the signature against the lower-case subject, so one signed in upper case fails', async () => {
    const subject = randomUUID().toUpperCase();
    expect(await rejection(await mint({ subject }))).toEqual({ status: 401, code: 'app_assertion.bad_signature' });
  });

  it('rejects a wrong key and a changed field', async () => {
    expect(await rejection(await mint({ secret: 'some-other-secret-of-the-same-length' }))).toEqual({
      status: 401,
      code: 'app_assertion.bad_signature',
    });
    const [app, , issuedAt, nonce, mac] = (await mint({})).split('.');
    expect(await rejection([app, randomUUID(), issuedAt, nonce, mac].join('.'))).toEqual({
      status: 401,
      code: 'app_assertion.bad_signature',
    });
  });

  it('accepts an assertion up to the TTL old and within the skew ahead; rejects one older or further ahead', async () => {
    await expect(verifier().verify(await mint({ issuedAt: nowSecs - TTL_SECS }))).resolves.toBeDefined();
    await expect(
      verifier().verify(await mint({ issuedAt: nowSecs + ASSERTION_CLOCK_SKEW_SECS })),
    ).resolves.toBeDefined();
    expect(await rejection(await mint({ issuedAt: nowSecs - TTL_SECS - 1 }))).toEqual({
      status: 401,
      code: 'app_assertion.expired',
    });
    expect(await rejection(await mint({ issuedAt: nowSecs + ASSERTION_CLOCK_SKEW_SECS + 1 }))).toEqual({
      status: 401,
      code: 'app_assertion.not_yet_valid',
    });
  });

  it('accepts a nonce once; a replay is rejected, and a rejected assertion does not burn its nonce', async () => {
    const nonce = `idaa_${randomUUID()}`;
    expect(await rejection(await mint({ nonce, secret: 'wrong-secret-wrong-secret-wrong' }))).toEqual({
      status: 401,
      code: 'app_assertion.bad_signature',
    });
    const header = await mint({ nonce });
    await expect(verifier().verify(header)).resolves.toBeDefined();
    expect(await rejection(header)).toEqual({ status: 401, code: 'app_assertion.replayed' });
  });

  it.runIf(usesRedis)('rejects a replay on a second node sharing the Redis', async () => {
    const secondNode = await openStore(namespace);
    try {
      const header = await mint({});
      await expect(verifier().verify(header)).resolves.toBeDefined();
      const onSecondNode = createAppAssertionVerifier({
        secrets: SECRETS,
        ttlSecs: TTL_SECS,
        nonces: secondNode,
        clock,
      });
      await expect(onSecondNode.verify(header)).rejects.toMatchObject({ code: 'app_assertion.replayed' });
    } finally {
      await secondNode.close();
    }
  });
});
