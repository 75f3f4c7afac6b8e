// @ts-check
import { api, ApiError } from '../api.js';
import { announce, errorBox, field, fieldProblem, h, show } from '../dom.js';
import { t } from '../i18n.js';
import { botCheck } from '../turnstile.js';

/**
 * A new user, invited by mail: the API has no route for an administrator to create an account, so this starts the
 * same registration as sign-up (POST /v1/auth/register) for the person. They get the mail to confirm their address;
 * the account exists once they follow it (within 24 hours), with the default role. A password given here is theirs
 * to sign in with (the administrator tells them); without one, a random one nobody sees is set, and they choose
 * their own with "Forgot password?" on the sign-in page. Sign-up must be open (the API says so otherwise).
 * @param {{ turnstileSiteKey?: string | null }} options
 */
export function newUserSection({ turnstileSiteKey }) {
  const hint = (/** @type {string} */ id, /** @type {string} */ text) => h('p', { class: 'muted hint', id }, text);
  const username = field(t('admin.newUsername'), {
    name: 'username',
    autocomplete: 'off',
    required: true,
    minlength: 3,
    maxlength: 30,
    pattern: '[A-Za-z0-9_]{3,30}',
    autocapitalize: 'none',
    spellcheck: 'false',
    'aria-describedby': 'new-user-username-hint',
  });
  username.wrapper.append(hint('new-user-username-hint', t('signup.usernameHint')));
  const email = field(t('admin.newEmail'), { name: 'email', type: 'email', autocomplete: 'off', required: true });
  const password = field(t('admin.newPassword'), {
    name: 'password',
    type: 'password',
    autocomplete: 'new-password',
    minlength: 8,
    'aria-describedby': 'new-user-password-hint',
  });
  password.wrapper.append(hint('new-user-password-hint', t('admin.newPasswordHint')));
  const problem = h('div');
  const submit = h('button', { type: 'submit' }, t('admin.invite'));
  const bot = turnstileSiteKey ? botCheck(turnstileSiteKey) : null;
  const form = h(
    'form',
    { class: 'card new-user', 'aria-labelledby': 'new-user-title' },
    h('h2', { id: 'new-user-title' }, t('admin.newUser')),
    h('p', {}, t('admin.newUserIntro')),
    problem,
    username.wrapper,
    email.wrapper,
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
    const name = username.input.value.trim();
    const address = email.input.value.trim();
    try {
      const body = {
        email: address,
        username: name,
        password: password.input.value || randomPassword(),
        turnstile_token: bot?.token() || undefined,
      };
      await api('POST', '/v1/auth/register', body, { signedIn: false });
      form.reset();
      const message = t('admin.invited', { name, email: address });
      show(problem, h('p', { class: 'ok', role: 'status' }, message));
      announce(message);
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
  return form;
}

/** 32 random characters (192 bits): a password nobody knows, replaced by the person's own through a reset. */
function randomPassword() {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  return btoa(String.fromCharCode(...bytes))
    .replaceAll('+', '-')
    .replaceAll('/', '_');
}

/**
 * The field an API refusal is about, from its code (`user.username_taken`, `password.breached`, …).
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
