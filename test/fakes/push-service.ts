import { createDecipheriv, createECDH, createPublicKey, hkdfSync, randomBytes, randomUUID, verify } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { startFakeServer, type FakeServer } from './http-fake.js';

export interface PushSubscriptionJson {
  endpoint: string;
  keys: { p256dh: string; auth: string };
}

export interface ReceivedPush {
  subscriptionId: string;
  /** The payload decrypted with the subscription's private key and auth secret (RFC 8291). */
  plaintext: string;
  /** The VAPID JWT's claims, after its signature was checked. */
  claims: { aud: string; exp: number; sub: string };
  headers: IncomingHttpHeaders;
}

export interface FakePushService extends FakeServer {
  /**
   * A new subscription, as a browser's `pushManager.subscribe()` would make: the service holds its private key and
   * auth secret. With `applicationServerKey`, only pushes signed with that VAPID key are accepted (else 403).
   */
  subscribe(applicationServerKey?: string): PushSubscriptionJson;
  /** The subscription ends (the user revoked it): pushes to it answer 410 Gone. */
  unsubscribe(endpoint: string): void;
  received: ReceivedPush[];
  /** Pushes refused, with the reason (also the answer's body). */
  rejected: string[];
}

interface Subscription {
  ecdh: ReturnType<typeof createECDH>;
  auth: Buffer;
  applicationServerKey?: string;
  gone: boolean;
}

class Refused extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * A Web Push service (RFC 8030) at `/push/<id>`: checks the VAPID token (RFC 8292: `Authorization: vapid t=<JWT>,
 * k=<key>`, ES256 signature by k, `aud` the service's origin, `exp` in the future and within 24 hours of `now`),
 * decrypts the `aes128gcm` body (RFC 8188 with RFC 8291's key derivation) and answers 201, as push services do.
 * Written with node:crypto alone, so it checks the sender's library rather than repeating it.
 */
export async function startFakePushService(now: () => number = Date.now): Promise<FakePushService> {
  const subscriptions = new Map<string, Subscription>();
  const received: ReceivedPush[] = [];
  const rejected: string[] = [];
  const server = await startFakeServer((request, body, response) => {
    const id = /^\/push\/([\w-]+)$/.exec(request.url ?? '')?.[1];
    const subscription = id ? subscriptions.get(id) : undefined;
    try {
      if (request.method !== 'POST' || !id || !subscription) throw new Refused(404, 'no such subscription');
      if (subscription.gone) throw new Refused(410, 'subscription expired or unsubscribed');
      if (!request.headers.ttl || !/^\d+$/.test(request.headers.ttl as string)) throw new Refused(400, 'TTL missing');
      const claims = checkVapid(request.headers.authorization, fake.url, now(), subscription.applicationServerKey);
      if (request.headers['content-encoding'] !== 'aes128gcm')
        throw new Refused(415, 'content-encoding must be aes128gcm');
      if (body.length > 4096) throw new Refused(413, 'payload too large');
      const plaintext = decrypt(body, subscription).toString('utf8');
      received.push({ subscriptionId: id, plaintext, claims, headers: request.headers });
      response.writeHead(201, { location: `/message/${randomUUID()}` }).end();
    } catch (error) {
      const status = error instanceof Refused ? error.status : 400;
      const reason = error instanceof Error ? error.message : String(error);
      rejected.push(reason);
      response.writeHead(status, { 'content-type': 'text/plain' }).end(reason);
    }
  });
  const fake: FakePushService = Object.assign(server, {
    received,
    rejected,
    subscribe(applicationServerKey?: string) {
      const ecdh = createECDH('prime256v1');
      ecdh.generateKeys();
      const auth = randomBytes(16);
      const subscriptionId = randomUUID();
      subscriptions.set(subscriptionId, { ecdh, auth, applicationServerKey, gone: false });
      return {
        endpoint: `${server.url}/push/${subscriptionId}`,
        keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth: auth.toString('base64url') },
      };
    },
    unsubscribe(endpoint: string) {
      const subscription = subscriptions.get(endpoint.split('/').pop()!);
      if (subscription) subscription.gone = true;
    },
  });
  return fake;
}

/** RFC 8292 section 3: the JWT's ES256 signature by the key in `k`, its audience and expiry. */
function checkVapid(header: string | undefined, origin: string, nowMs: number, expectedKey?: string) {
  const match = /^vapid t=([\w-]+\.[\w-]+\.[\w-]+), k=([\w-]+)$/.exec(header ?? '');
  if (!match) throw new Refused(401, 'Authorization must be "vapid t=<jwt>, k=<key>"');
  const [, jwt, key] = match as unknown as [string, string, string];
  if (expectedKey && key !== expectedKey) throw new Refused(403, 'VAPID key differs from the subscription’s');
  const raw = Buffer.from(key, 'base64url');
  if (raw.length !== 65 || raw[0] !== 4) throw new Refused(401, 'k is not an uncompressed P-256 point');
  const publicKey = createPublicKey({
    key: {
      kty: 'EC',
      crv: 'P-256',
      x: raw.subarray(1, 33).toString('base64url'),
      y: raw.subarray(33).toString('base64url'),
    },
    format: 'jwk',
  });
  const [head, payload, signature] = jwt.split('.') as [string, string, string];
  const decoded = (part: string) =>
    JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>;
  if (decoded(head).alg !== 'ES256') throw new Refused(401, 'JWT alg must be ES256');
  const valid = verify(
    'sha256',
    Buffer.from(`${head}.${payload}`),
    { key: publicKey, dsaEncoding: 'ieee-p1363' },
    Buffer.from(signature, 'base64url'),
  );
  if (!valid) throw new Refused(401, 'JWT signature invalid');
  const claims = decoded(payload) as { aud: string; exp: number; sub: string };
  if (claims.aud !== origin) throw new Refused(401, `JWT aud ${claims.aud} is not ${origin}`);
  const nowS = nowMs / 1000;
  if (!(typeof claims.exp === 'number' && claims.exp > nowS)) throw new Refused(401, 'JWT expired');
  if (claims.exp > nowS + 24 * 3600) throw new Refused(401, 'JWT exp more than 24 hours ahead');
  if (typeof claims.sub !== 'string' || !/^(mailto:|https:)/.test(claims.sub))
    throw new Refused(401, 'JWT sub missing');
  return claims;
}

/**
 * RFC 8188 `aes128gcm` with RFC 8291's keys: header salt(16) | rs(4) | idlen(1) | keyid (the sender's public key);
 * IKM = HKDF(auth secret, ECDH secret, "WebPush: info\0" | ua_public | as_public, 32); CEK and nonce from
 * HKDF(salt, IKM, "Content-Encoding: aes128gcm\0" / "Content-Encoding: nonce\0"). One record (RFC 8291 section 4),
 * its padding delimiter 2.
 */
function decrypt(body: Buffer, subscription: Subscription): Buffer {
  if (body.length < 21) throw new Refused(400, 'body shorter than the aes128gcm header');
  const salt = body.subarray(0, 16);
  const recordSize = body.readUInt32BE(16);
  const idLength = body[20]!;
  const senderKey = body.subarray(21, 21 + idLength);
  const record = body.subarray(21 + idLength);
  if (idLength !== 65) throw new Refused(400, 'keyid is not the sender’s P-256 public key');
  if (record.length > recordSize || record.length < 17) throw new Refused(400, 'not exactly one record');
  const secret = subscription.ecdh.computeSecret(senderKey);
  const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0'), subscription.ecdh.getPublicKey(), senderKey]);
  const ikm = Buffer.from(hkdfSync('sha256', secret, subscription.auth, keyInfo, 32));
  const cek = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: aes128gcm\0'), 16));
  const nonce = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: nonce\0'), 12));
  const decipher = createDecipheriv('aes-128-gcm', cek, nonce);
  decipher.setAuthTag(record.subarray(record.length - 16));
  let padded: Buffer;
  try {
    padded = Buffer.concat([decipher.update(record.subarray(0, record.length - 16)), decipher.final()]);
  } catch {
    throw new Refused(400, 'decryption failed');
  }
  let end = padded.length - 1;
  while (end >= 0 && padded[end] === 0) end--;
  if (padded[end] !== 2) throw new Refused(400, 'last record’s delimiter is not 2');
  return padded.subarray(0, end);
}
