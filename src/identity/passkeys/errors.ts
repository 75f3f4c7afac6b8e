import { defineErrors } from '../../platform/http/errors.js';

export const PasskeyErrors = defineErrors('passkey', {
  not_found: [404, 'Passkey not found'],
  invalid_response: [400, 'The passkey response could not be verified'],
  already_registered: [409, 'This passkey is already registered', { constraint: 'passkeys_credential_id_key' }],
  last_credential: [409, 'This is the last way to sign in to the account; add a password or another passkey first'],
  none_registered: [400, 'This account has no passkey; answer with a two-factor code'],
  sign_in_failed: [401, 'The passkey sign-in could not be verified'],
  cloned: [
    401,
    "The passkey's signature counter went back: the authenticator may have been cloned; the sign-in is refused",
  ],
});
