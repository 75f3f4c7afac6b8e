// @ts-check
import { api, ApiError } from '../api.js';
import { errorBox, field, fieldProblem, h, show } from '../dom.js';
import { t } from '../i18n.js';
import { botCheck } from '../turnstile.js';

/**
 * The console's pages before sign-in besides the sign-in itself: asking for a password reset
 * (POST /v1/auth/reset-password, #/reset-password) and signing up (POST /v1/auth/register, #/signup). Both end in a
 * mail whose link opens this server's own page (or FRONTEND_URL's) to set the password or confirm the address; the
 * console then signs in as always. With bot protection on, each form carries the Turnstile widget.
 */

/** Whether sign-up is open: the global switch (the page's config) and the email platform's own two (public). */
export async function registrationOpen(globalSwitch = true) {
  if (!globalSwitch) return false;
  const { data } = await api('GET', '/v1/platforms/email', undefined, { signedIn: false });
  return data.enabled && data.registration_enabled;
}

/**
 * A signed-out page: its form and the way back to sign-in; the document's title is the form's heading.
 * @param {string} title
 * @param {HTMLFormElement} form
 */
function frame(title, form) {
  document.title = `${title} · Waygate`;
  return h(
    'div',
    { class: 'signin' },
    form,
    h('p', { class: 'signin-links' }, h('a', { href: '#/' }, t('signin.back'))),
  );
}

/**
 * #/reset-password: the address, then the same words whether it has an account or not (as the API answers).
 * @param {{ turnstileSiteKey?: string | null }} options
 */
export function resetPage({ turnstileSiteKey }) {
  const email = field(t('reset.email'), { name: 'email', type: 'email', autocomplete: 'email', required: true });
  const problem = h('div');
  const submit = h('button', { type: 'submit' }, t('reset.submit'));
  const bot = turnstileSiteKey ? botCheck(turnstileSiteKey) : null;
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'reset-title' },
    h('h1', { id: 'reset-title' }, t('reset.title')),
    h('p', {}, t('reset.intro')),
    problem,
    email.wrapper,
    bot?.element,
    submit,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    submit.disabled = true;
    show(problem);
    try {
      const address = email.input.value.trim();
      await api(
        'POST',
        '/v1/auth/reset-password',
        { email: address, turnstile_token: bot?.token() || undefined },
        { signedIn: false },
      );
      show(
        form,
        h('h1', { id: 'reset-title', tabindex: '-1' }, t('reset.title')),
        sent(t('reset.sent', { email: address })),
      );
      form.querySelector('h1')?.focus();
    } catch (err) {
      show(problem, errorBox(botFirst(err)));
    } finally {
      bot?.reset();
      submit.disabled = false;
    }
  });
  return frame(t('reset.title'), form);
}

/**
 * #/signup: email, username and password; then the mail to confirm the address. What the API refuses about a field
 * (a taken name or address, a short or breached password) is shown at that field.
 * @param {{ turnstileSiteKey?: string | null }} options
 */
export function signUpPage({ turnstileSiteKey }) {
  const hint = (/** @type {string} */ id, /** @type {string} */ text) => h('p', { class: 'muted hint', id }, text);
  const email = field(t('signup.email'), { name: 'email', type: 'email', autocomplete: 'email', required: true });
  const username = field(t('signup.username'), {
    name: 'username',
    autocomplete: 'username',
    required: true,
    minlength: 3,
    maxlength: 30,
    pattern: '[A-Za-z0-9_]{3,30}',
    autocapitalize: 'none',
    spellcheck: 'false',
    'aria-describedby': 'signup-username-hint',
  });
  username.wrapper.append(hint('signup-username-hint', t('signup.usernameHint')));
  const password = field(t('signup.password'), {
    name: 'password',
    type: 'password',
    autocomplete: 'new-password',
    required: true,
    minlength: 8,
    'aria-describedby': 'signup-password-hint',
  });
  password.wrapper.append(hint('signup-password-hint', t('signup.passwordHint')));
  const problem = h('div');
  const submit = h('button', { type: 'submit' }, t('signup.submit'));
  const bot = turnstileSiteKey ? botCheck(turnstileSiteKey) : null;
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'signup-title' },
    h('h1', { id: 'signup-title' }, t('signup.title')),
    problem,
    email.wrapper,
    username.wrapper,
    password.wrapper,
    bot?.element,
    submit,
  );
  const inputs = { email: email.input, username: username.input, password: password.input };
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    submit.disabled = true;
    show(problem);
    for (const input of Object.values(inputs)) fieldProblem(input);
    try {
      const address = email.input.value.trim();
      await api(
        'POST',
        '/v1/auth/register',
        {
          email: address,
          username: username.input.value.trim(),
          password: password.input.value,
          turnstile_token: bot?.token() || undefined,
        },
        { signedIn: false },
      );
      show(
        form,
        h('h1', { id: 'signup-title', tabindex: '-1' }, t('signup.title')),
        sent(t('signup.sent', { email: address })),
      );
      form.querySelector('h1')?.focus();
    } catch (err) {
      const at = fieldOf(err);
      if (at) {
        fieldProblem(inputs[at], /** @type {Error} */ (err).message);
        inputs[at].focus();
      } else show(problem, errorBox(botFirst(err)));
    } finally {
      bot?.reset();
      submit.disabled = false;
    }
  });
  return frame(t('signup.title'), form);
}

/** @param {string} text */
const sent = (text) => h('p', { class: 'ok', role: 'status' }, text);

/**
 * The field an API refusal of a sign-up is about, from its code (`user.username_taken`, `password.breached`, …).
 * @param {unknown} err
 * @returns {'email' | 'username' | 'password' | null}
 */
function fieldOf(err) {
  if (!(err instanceof ApiError) || typeof err.code !== 'string') return null;
  const names = /** @type {const} */ (['email', 'username', 'password']);
  return names.find((name) => err.code?.includes(name)) ?? null;
}

/** The bot check's "token missing" in words people act on. @param {unknown} err */
const botFirst = (err) =>
  err instanceof ApiError && err.code === 'bot_check.token_missing' ? t('signin.botCheckFirst') : err;
