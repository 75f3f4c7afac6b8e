import { api, session } from '../api.js';
import { errorBox, field, h, show } from '../dom.js';
import { t } from '../i18n.js';

/**
 * Sign-in with username or email (POST /v1/auth/login), then the code step when the account has
 * two-factor authentication (POST /v1/auth/2fa/verify). What the API refuses (wrong password,
 * lockout, ban, bot check) is shown as the API's own message.
 */
export function signInPage({ message, onSignedIn }) {
  const container = h('div', { class: 'signin' });
  const finish = (result) => {
    // Where "after sign-in" starts for the speed bench (bench/console.js): the session has been granted.
    performance.mark('signed-in');
    session.token = result.session_token;
    if (result.preferred_locale) localStorage.setItem('waygate.locale', result.preferred_locale);
    onSignedIn();
  };

  function credentialsStep(notice) {
    const identifier = field(t('signin.identifier'), { name: 'identifier', autocomplete: 'username', required: true, autocapitalize: 'none', spellcheck: 'false' });
    const password = field(t('signin.password'), { name: 'password', type: 'password', autocomplete: 'current-password', required: true });
    const problem = h('div');
    const submit = h('button', { type: 'submit' }, t('signin.submit'));
    const form = h('form', { class: 'card', 'aria-labelledby': 'signin-title', novalidate: false },
      h('h1', { id: 'signin-title' }, t('signin.title')),
      notice ? h('p', { class: 'ok', role: 'status' }, notice) : null,
      problem, identifier.wrapper, password.wrapper, submit);
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      submit.disabled = true;
      try {
        const result = await api('POST', '/v1/auth/login', { identifier: identifier.input.value.trim(), password: password.input.value }, { signedIn: false });
        if (result.requires_2fa) return codeStep(result.temp_token);
        finish(result);
      } catch (err) {
        show(problem, errorBox(err.message));
        password.input.value = '';
        password.input.focus();
      } finally {
        submit.disabled = false;
      }
    });
    show(container, form);
  }

  function codeStep(tempToken) {
    const code = field(t('signin.code'), { name: 'code', autocomplete: 'one-time-code', inputmode: 'text', required: true, autocapitalize: 'none', spellcheck: 'false' });
    const problem = h('div');
    const submit = h('button', { type: 'submit' }, t('signin.verify'));
    const form = h('form', { class: 'card', 'aria-labelledby': 'twofactor-title' },
      h('h1', { id: 'twofactor-title' }, t('signin.twoFactor')), h('p', {}, t('signin.twoFactorHint')), problem, code.wrapper, submit,
      h('button', { type: 'button', class: 'secondary', onclick: () => credentialsStep() }, t('signin.restart')));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      submit.disabled = true;
      try {
        finish(await api('POST', '/v1/auth/2fa/verify', { temp_token: tempToken, code: code.input.value.trim() }, { signedIn: false }));
      } catch (err) {
        show(problem, errorBox(err.message));
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
