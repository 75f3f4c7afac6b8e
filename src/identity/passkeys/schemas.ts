import { Type } from 'typebox';
import { Body, DateTime, Nullable } from '../../platform/http/schemas.js';

/** A WebAuthn JSON object as a browser's `toJSON()` gives it; @simplewebauthn/server checks its inside. */
const WebAuthnJson = (description: string, example: Record<string, unknown>) =>
  Type.Object(
    { id: Type.String({ minLength: 1, maxLength: 1024 }), type: Type.Literal('public-key') },
    { additionalProperties: true, description, examples: [example] },
  );

const REGISTRATION_EXAMPLE = {
  id: 'hT3k0ZsQ8bKJXc1lE4cF1w',
  rawId: 'hT3k0ZsQ8bKJXc1lE4cF1w',
  type: 'public-key',
  response: {
    clientDataJSON: 'eyJ0eXBlIjoid2ViYXV0aG4uY3JlYXRlIn0',
    attestationObject: 'o2NmbXRkbm9uZQ',
    transports: ['internal'],
  },
  clientExtensionResults: {},
};
const RegistrationResponse = WebAuthnJson(
  'The registration response (PublicKeyCredential.toJSON() of navigator.credentials.create)',
  REGISTRATION_EXAMPLE,
);
const AUTHENTICATION_EXAMPLE = {
  id: 'hT3k0ZsQ8bKJXc1lE4cF1w',
  rawId: 'hT3k0ZsQ8bKJXc1lE4cF1w',
  type: 'public-key',
  response: {
    clientDataJSON: 'eyJ0eXBlIjoid2ViYXV0aG4uZ2V0In0',
    authenticatorData: 'SZYN5YgOjGh0NBcPZHZgW4_krrmihjLHmVzzuoMdl2MFAAAAAQ',
    signature: 'MEUCIQ',
  },
  clientExtensionResults: {},
};
const AuthenticationResponse = WebAuthnJson(
  'The authentication response (PublicKeyCredential.toJSON() of navigator.credentials.get)',
  AUTHENTICATION_EXAMPLE,
);

const Name = Type.String({ minLength: 1, maxLength: 100, description: 'A name the user recognises it by' });

export const RegisterPasskeyBody = Body(
  { name: Type.Optional(Name), response: RegistrationResponse },
  {
    example: { name: 'Phone', response: REGISTRATION_EXAMPLE },
  },
);
export const RenamePasskeyBody = Body({ name: Name }, { example: { name: 'Work laptop' } });
export const PasskeySignInOptionsBody = Body(
  {
    identifier: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 320,
        description: 'Username or email; left out for a usernameless (discoverable) sign-in',
      }),
    ),
  },
  { example: {} },
);
export const PasskeySignInBody = Body(
  { response: AuthenticationResponse },
  { example: { response: AUTHENTICATION_EXAMPLE } },
);
const TempToken = Type.String({ minLength: 1, maxLength: 512, description: '2fa_… token from the login response' });
export const PasskeySecondFactorOptionsBody = Body(
  { temp_token: TempToken },
  { example: { temp_token: '2fa_9c8b7a6d5e4f3a2b1c0d9e8f7a6b5c4d' } },
);
export const PasskeySecondFactorBody = Body(
  { temp_token: TempToken, response: AuthenticationResponse },
  {
    example: { temp_token: '2fa_9c8b7a6d5e4f3a2b1c0d9e8f7a6b5c4d', response: AUTHENTICATION_EXAMPLE },
  },
);

export { IdParams as PasskeyIdParams } from '../../platform/http/schemas.js';

/** The options for navigator.credentials.create / get, in their JSON form (PublicKeyCredential.parse*OptionsFromJSON). */
export const WebAuthnOptions = Type.Object({ challenge: Type.String() }, { additionalProperties: true });

export const Passkey = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  device_type: Type.String({ description: 'singleDevice, or multiDevice for a synced passkey' }),
  backed_up: Type.Boolean(),
  user_verified: Type.Boolean({ description: 'The authenticator verified the user (PIN, biometrics) at registration' }),
  transports: Type.Array(Type.String()),
  created_at: DateTime,
  last_used_at: Nullable(DateTime),
});
export const PasskeyList = Type.Object({ data: Type.Array(Passkey) });
