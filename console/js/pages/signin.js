// @ts-check
import { api, ApiError, session } from '../api.js';
import { errorBox, field, h, messageOf, show } from '../dom.js';
import { t } from '../i18n.js';
import { botCheck } from '../turnstile.js';
import { conditionalUiAvailable, getPasskey, passkeysSupported } from '../webauthn.js';
import { registrationOpen } from './signed-out.js';

/**
 * Sign-in with username or email (POST /v1/auth/login), then the code step when the account has
 * two-factor authentication (POST /v1/auth/2fa/verify). What the API refuses (wrong password,
 * lockout, ban, bot check) is shown as the API's own message. With passkeys: a button (and, where the
 * browser offers it, the username field's autofill) signs in without a username (POST /v1/auth/passkey),
 * and the code step can be answered with a passkey instead (POST /v1/auth/2fa/passkey).
 * Below the form, the ways to the other signed-out pages: "Forgot your password?" (#/reset-password) and, while
 * sign-up is open, "Create an account" (#/signup).
 * @param {{ message?: string, onSignedIn: () => void, turnstileSiteKey?: string | null, registration?: boolean }} options
 */
export function signInPage({ message, onSignedIn, turnstileSiteKey, registration }) {
  const container = h('div', { class: 'signin' });
  // The autofill offer of passkeys (conditional UI) must be withdrawn before any other passkey request.
  let autofill = new AbortController();
  /** @param {unknown} err */
  const passkeyError = (err) =>
    err instanceof Error && err.name === 'NotAllowedError' ? t('passkeys.cancelled') : messageOf(err);
  /** @param {import('../types/routes').Answer<'post', '/v1/auth/login'>} result a granted session (every sign-in route answers this shape) */
  const finish = (result) => {
    // Where "after sign-in" starts for the speed bench (bench/console.js): the session has been granted.
    performance.mark('signed-in');
    autofill.abort();
    session.token = result.session_token ?? null;
    if (result.preferred_locale) localStorage.setItem('waygate.locale', result.preferred_locale);
    onSignedIn();
  };

  /** @param {string} [notice] */
  function credentialsStep(notice) {
    const identifier = field(t('signin.identifier'), {
      name: 'identifier',
      autocomplete: 'username webauthn',
      required: true,
      autocapitalize: 'none',
      spellcheck: 'false',
    });
    const password = field(t('signin.password'), {
      name: 'password',
      type: 'password',
      autocomplete: 'current-password',
      required: true,
    });
    const problem = h('div');
    const submit = h('button', { type: 'submit' }, t('signin.submit'));
    // With bot protection on, the API refuses a password sign-in without the widget's token.
    const bot = turnstileSiteKey ? botCheck(turnstileSiteKey) : null;
    const form = h(
      'form',
      { class: 'card', 'aria-labelledby': 'signin-title', novalidate: false },
      h('h1', { id: 'signin-title' }, t('signin.title')),
      notice ? h('p', { class: 'ok', role: 'status' }, notice) : null,
      problem,
      identifier.wrapper,
      password.wrapper,
      bot?.element,
      submit,
      passkeysSupported()
        ? h('button', { type: 'button', class: 'secondary', onclick: () => withPasskey() }, t('signin.passkey'))
        : null,
    );
    const signUp = h('a', { href: '#/signup', hidden: true }, t('signin.signup'));
    const links = h('p', { class: 'signin-links' }, h('a', { href: '#/reset-password' }, t('signin.forgot')), signUp);
    // Offered only while sign-up is open (else the link would lead to a refusal); unknown: not offered.
    registrationOpen(registration).then(
      (open) => (signUp.hidden = !open),
      () => {},
    );

    /**
     * Usernameless: the browser offers every passkey it holds for this site; `mediation` 'conditional' waits in the autofill.
     * @param {CredentialMediationRequirement} [mediation]
     */
    async function withPasskey(mediation) {
      autofill.abort();
      autofill = new AbortController();
      try {
        const options = await api('POST', '/v1/auth/passkey/options', {}, { signedIn: false });
        const response = await getPasskey(options, { mediation, signal: autofill.signal });
        if (!response) return;
        const result = await api('POST', '/v1/auth/passkey', { response }, { signedIn: false });
        if (result.requires_2fa && result.temp_token) return codeStep(result.temp_token);
        finish(result);
      } catch (err) {
        // The autofill offer fails quietly (withdrawn, or a browser that cannot ask here); a click is answered.
        if (!mediation && !(err instanceof Error && err.name === 'AbortError'))
          show(problem, errorBox(passkeyError(err)));
      }
    }
    conditionalUiAvailable().then((available) => {
      if (available) withPasskey('conditional');
    });
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      submit.disabled = true;
      try {
        const credentials = {
          identifier: identifier.input.value.trim(),
          password: password.input.value,
          turnstile_token: bot?.token() || undefined,
        };
        const result = await api('POST', '/v1/auth/login', credentials, { signedIn: false });
        if (result.requires_2fa && result.temp_token) return codeStep(result.temp_token);
        finish(result);
      } catch (err) {
        // The API names the missing field; people are told what to do.
        show(
          problem,
          errorBox(err instanceof ApiError && err.code === 'bot_check.token_missing' ? t('signin.botCheckFirst') : err),
        );
        password.input.value = '';
        password.input.focus();
      } finally {
        bot?.reset();
        submit.disabled = false;
      }
    });
    show(container, form, links);
  }

  /** @param {string} tempToken the first step's, for the second */
  function codeStep(tempToken) {
    const code = field(t('signin.code'), {
      name: 'code',
      autocomplete: 'one-time-code',
      inputmode: 'text',
      required: true,
      autocapitalize: 'none',
      spellcheck: 'false',
    });
    const problem = h('div');
    const submit = h('button', { type: 'submit' }, t('signin.verify'));
    const form = h(
      'form',
      { class: 'card', 'aria-labelledby': 'twofactor-title' },
      h('h1', { id: 'twofactor-title' }, t('signin.twoFactor')),
      h('p', {}, t('signin.twoFactorHint')),
      problem,
      code.wrapper,
      submit,
      passkeysSupported()
        ? h('button', { type: 'button', class: 'secondary', onclick: usePasskey }, t('signin.usePasskey'))
        : null,
      h('button', { type: 'button', class: 'secondary', onclick: () => credentialsStep() }, t('signin.restart')),
    );
    async function usePasskey() {
      autofill.abort();
      try {
        const options = await api(
          'POST',
          '/v1/auth/2fa/passkey/options',
          { temp_token: tempToken },
          { signedIn: false },
        );
        finish(
          await api(
            'POST',
            '/v1/auth/2fa/passkey',
            { temp_token: tempToken, response: await getPasskey(options) },
            { signedIn: false },
          ),
        );
      } catch (err) {
        show(problem, errorBox(passkeyError(err)));
      }
    }
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      submit.disabled = true;
      try {
        finish(
          await api(
            'POST',
            '/v1/auth/2fa/verify',
            { temp_token: tempToken, code: code.input.value.trim() },
            { signedIn: false },
          ),
        );
      } catch (err) {
        show(problem, errorBox(err));
        code.input.select();
      } finally {
        submit.disabled = false;
      }
    });
    show(container, form);
    code.input.focus();
  }

  credentialsStep(message);
  return container;
}
