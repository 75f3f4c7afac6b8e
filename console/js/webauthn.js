/**
 * Passkey ceremonies in the browser: the server's WebAuthn JSON options go in, the credential's JSON
 * (PublicKeyCredential.toJSON()) comes out, as the API's passkey routes take it.
 */
export const passkeysSupported = () =>
  typeof window.PublicKeyCredential?.parseCreationOptionsFromJSON === 'function' && typeof navigator.credentials?.create === 'function';

export async function createPasskey(options) {
  const credential = await navigator.credentials.create({ publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(options) });
  return credential.toJSON();
}

/** `mediation: 'conditional'` offers the passkeys in the username field's autofill; `signal` withdraws the offer. */
export async function getPasskey(options, { mediation, signal } = {}) {
  const credential = await navigator.credentials.get({ publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(options), mediation, signal });
  return credential?.toJSON();
}

/** Whether the browser can offer passkeys in autofill (conditional UI). */
export async function conditionalUiAvailable() {
  return passkeysSupported() && (await window.PublicKeyCredential.isConditionalMediationAvailable?.()) === true;
}
