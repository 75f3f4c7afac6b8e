import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import type { RequestBody } from './client.js';

/** Just enough CBOR (RFC 8949) for attestation objects and COSE keys: integers, byte and text strings, maps. */
type Cbor = number | string | Uint8Array | Map<number | string, Cbor>;
function head(major: number, length: number): Buffer {
  if (length < 24) return Buffer.from([(major << 5) | length]);
  if (length < 0x100) return Buffer.from([(major << 5) | 24, length]);
  if (length < 0x10000) return Buffer.from([(major << 5) | 25, length >> 8, length & 0xff]);
  const out = Buffer.alloc(5);
  out[0] = (major << 5) | 26;
  out.writeUInt32BE(length, 1);
  return out;
}
export function cbor(value: Cbor): Buffer {
  if (typeof value === 'number') return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (typeof value === 'string') return Buffer.concat([head(3, Buffer.byteLength(value)), Buffer.from(value)]);
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), value]);
  return Buffer.concat([head(5, value.size), ...[...value].flatMap(([key, item]) => [cbor(key), cbor(item)])]);
}

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_AT = 0x40;
const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest();
const b64url = (data: Buffer | string) => Buffer.from(data).toString('base64url');

/** What the routes take: the registration response, and the assertion (of a sign-in or a second factor). */
type Registration = RequestBody<'post', '/v1/users/me/passkeys'>['response'];
type Assertion = RequestBody<'post', '/v1/auth/passkey'>['response'];

/**
 * Options as the server hands them out: a challenge, and for a creation the user's handle under `user.id`
 * (the document types the rest loosely, so the handle is checked when it is read).
 */
type ServerOptions = { challenge: string } & Record<string, unknown>;

interface Credential {
  id: Buffer;
  privateKey: KeyObject;
  cose: Buffer;
  userHandle: string;
  counter: number;
}

/**
 * A software authenticator (a "none" attestation, ES256 keys from node:crypto): answers the options the
 * server hands out with the JSON a browser's PublicKeyCredential.toJSON() gives, typed as the routes take it.
 */
export function softwareAuthenticator(origin: string, options: { userVerification?: boolean } = {}) {
  const rpId = new URL(origin).hostname;
  const credentials: Credential[] = [];
  const flags = (extra = 0) => FLAG_UP | (options.userVerification === false ? 0 : FLAG_UV) | extra;
  const clientData = (type: string, challenge: string) =>
    Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
  const counterBytes = (counter: number) => {
    const out = Buffer.alloc(4);
    out.writeUInt32BE(counter);
    return out;
  };

  return {
    credentials,

    /** Answers creation options (POST /v1/users/me/passkeys/options) with a new resident credential. */
    create(creationOptions: ServerOptions) {
      const userHandle = (creationOptions.user as { id?: unknown } | undefined)?.id;
      if (typeof userHandle !== 'string') throw new Error('creation options without user.id');
      const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const jwk = publicKey.export({ format: 'jwk' });
      const cose = cbor(
        new Map<number, Cbor>([
          [1, 2],
          [3, -7],
          [-1, 1],
          [-2, Buffer.from(jwk.x!, 'base64url')],
          [-3, Buffer.from(jwk.y!, 'base64url')],
        ]),
      );
      const id = randomBytes(16);
      const credential = { id, privateKey, cose, userHandle, counter: 0 };
      credentials.push(credential);
      const idLength = Buffer.alloc(2);
      idLength.writeUInt16BE(id.length);
      const authData = Buffer.concat([
        sha256(rpId),
        Buffer.from([flags(FLAG_AT)]),
        counterBytes(0),
        Buffer.alloc(16),
        idLength,
        id,
        cose,
      ]);
      const attestationObject = cbor(
        new Map<string, Cbor>([
          ['fmt', 'none'],
          ['attStmt', new Map()],
          ['authData', authData],
        ]),
      );
      return {
        id: b64url(id),
        rawId: b64url(id),
        type: 'public-key' as const,
        authenticatorAttachment: 'platform',
        clientExtensionResults: {},
        response: {
          clientDataJSON: b64url(clientData('webauthn.create', creationOptions.challenge)),
          attestationObject: b64url(attestationObject),
          transports: ['internal'],
        },
      } satisfies Registration;
    },

    /** Answers request options with an assertion of `credential` (the first by default), its counter moved by `step`. */
    get(requestOptions: ServerOptions, credential: Credential = credentials[0]!, step = 1) {
      credential.counter += step;
      const authData = Buffer.concat([sha256(rpId), Buffer.from([flags()]), counterBytes(credential.counter)]);
      const clientDataJSON = clientData('webauthn.get', requestOptions.challenge);
      const signature = sign('sha256', Buffer.concat([authData, sha256(clientDataJSON)]), credential.privateKey);
      return {
        id: b64url(credential.id),
        rawId: b64url(credential.id),
        type: 'public-key' as const,
        authenticatorAttachment: 'platform',
        clientExtensionResults: {},
        response: {
          clientDataJSON: b64url(clientDataJSON),
          authenticatorData: b64url(authData),
          signature: b64url(signature),
          userHandle: credential.userHandle,
        },
      } satisfies Assertion;
    },
  };
}
