// @ts-check
/**
 * Passkey ceremonies in the browser: the server's WebAuthn JSON options go in, the credential's JSON
 * (PublicKeyCredential.toJSON()) comes out, as the API's passkey routes take it.
 */
/** @typedef {{ challenge: string, [field: string]: unknown }} WebAuthnOptions */

export const passkeysSupported = () =>
  typeof window.PublicKeyCredential?.parseCreationOptionsFromJSON === 'function' &&
  typeof navigator.credentials?.create === 'function';

/**
 * A new passkey: the JSON of the credential the authenticator creates (null when the user cancels).
 * @param {WebAuthnOptions} options the server's (its schema names only the challenge; the browser checks the rest)
 */
export async function createPasskey(options) {
  const publicKey = PublicKeyCredential.parseCreationOptionsFromJSON(
    /** @type {PublicKeyCredentialCreationOptionsJSON} */ (/** @type {unknown} */ (options)),
  );
  const credential = /** @type {PublicKeyCredential | null} */ (await navigator.credentials.create({ publicKey }));
  return credential?.toJSON();
}

/**
 * `mediation: 'conditional'` offers the passkeys in the username field's autofill; `signal` withdraws the offer.
 * @param {WebAuthnOptions} options the server's
 * @param {{ mediation?: CredentialMediationRequirement, signal?: AbortSignal }} [ceremony]
 */
export async function getPasskey(options, { mediation, signal } = {}) {
  const publicKey = PublicKeyCredential.parseRequestOptionsFromJSON(
    /** @type {PublicKeyCredentialRequestOptionsJSON} */ (/** @type {unknown} */ (options)),
  );
  const credential = /** @type {PublicKeyCredential | null} */ (
    await navigator.credentials.get({ publicKey, mediation, signal })
  );
  return credential?.toJSON();
}

/** Whether the browser can offer passkeys in autofill (conditional UI). */
export async function conditionalUiAvailable() {
  return passkeysSupported() && (await window.PublicKeyCredential.isConditionalMediationAvailable?.()) === true;
}
