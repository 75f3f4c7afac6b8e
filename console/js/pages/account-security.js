// @ts-check
import { api, get, post } from '../api.js';
import { announce, errorBox, field, h, show } from '../dom.js';
import { formatTime, t } from '../i18n.js';

/**
 * A form of labelled fields whose submit calls `action()`; the API's refusal is shown in the form.
 * @param {{ wrapper: HTMLElement }[]} fields
 * @param {string} submitLabel
 * @param {() => Promise<unknown>} action
 * @param {{ danger?: boolean }} [options]
 */
function form(fields, submitLabel, action, { danger = false } = {}) {
  const problem = h('div');
  const button = h('button', { type: 'submit', class: danger ? 'danger' : undefined }, submitLabel);
  const element = h('form', { class: 'card' }, problem, ...fields.map((f) => f.wrapper), button);
  element.addEventListener('submit', async (event) => {
    event.preventDefault();
    button.disabled = true;
    show(problem);
    try {
      await action();
    } catch (err) {
      show(problem, errorBox(err));
    } finally {
      button.disabled = false;
    }
  });
  return element;
}

/** @param {string} label */
const codeField = (label) =>
  field(label, { name: 'code', autocomplete: 'one-time-code', inputmode: 'numeric', required: true, maxlength: 20 });

/** @param {string[]} codes */
const backupList = (codes) =>
  h(
    'div',
    { class: 'ok', role: 'status' },
    h('p', {}, t('twofactor.backupOnce')),
    h('ul', { class: 'codes' }, ...codes.map((code) => h('li', {}, h('code', {}, code)))),
  );

/**
 * Two-factor authentication of one's own account (the spec's setup states): setup shows the QR code the
 * API draws and the secret to type, a code from the app turns it on and shows the backup codes once;
 * once on, a code turns it off or replaces the backup codes.
 * @param {import('../types/console').Me} me
 */
export function twoFactorSection(me) {
  const body = h('div');
  const section = h(
    'section',
    { 'aria-labelledby': 'twofactor-title' },
    h('h2', { id: 'twofactor-title' }, t('account.twoFactor')),
    body,
  );

  /** @param {Node} [notice] */
  async function render(notice) {
    const status = await get(`/v1/users/me/2fa/status?user_id=${me.userId}`);
    if (status.enabled) {
      const off = codeField(t('twofactor.codeOrBackup'));
      const renew = codeField(t('twofactor.code'));
      const fresh = h('div');
      show(
        body,
        h(
          'p',
          {},
          t('account.twoFactorOn', {
            time: status.enabled_at ? formatTime(status.enabled_at) : '–',
            count: status.backup_codes_remaining,
          }),
        ),
        notice,
        h(
          'div',
          { class: 'apps' },
          h(
            'div',
            {},
            h('h3', {}, t('twofactor.newCodes')),
            form([renew], t('twofactor.newCodes'), async () => {
              const result = await post('/v1/users/me/2fa/backup-codes/regenerate', { code: renew.input.value.trim() });
              show(fresh, backupList(result.backup_codes));
              announce(t('twofactor.backupOnce'));
            }),
            fresh,
          ),
          h(
            'div',
            {},
            h('h3', {}, t('twofactor.disable')),
            form(
              [off],
              t('twofactor.disable'),
              async () => {
                await api('DELETE', '/v1/users/me/2fa', { code: off.input.value.trim() });
                announce(t('twofactor.disabled'));
                await render(h('p', { class: 'ok' }, t('twofactor.disabled')));
              },
              { danger: true },
            ),
          ),
        ),
      );
      return;
    }
    const start = h('button', { type: 'button', onclick: setup }, t('twofactor.setup'));
    show(body, notice, h('p', {}, t('account.twoFactorOff')), start);
  }

  async function setup() {
    const problem = h('div');
    try {
      const result = await post('/v1/users/me/2fa/setup', {});
      const code = codeField(t('twofactor.code'));
      show(
        body,
        h(
          'div',
          { class: 'card twofactor-setup' },
          h('p', {}, t('twofactor.scan')),
          h('img', { class: 'qr', src: result.qr_code_image, alt: t('twofactor.qr'), width: 192, height: 192 }),
          h('p', {}, t('twofactor.manual'), ' ', h('code', { id: 'totp-secret' }, result.secret)),
          h('p', { class: 'muted' }, t('twofactor.expires', { time: formatTime(result.expires_at) })),
        ),
        form([code], t('twofactor.enable'), async () => {
          const verified = await post('/v1/users/me/2fa/verify', { code: code.input.value.trim() });
          await render(backupList(verified.backup_codes));
          announce(t('twofactor.enabled'));
        }),
      );
      body.querySelector('input')?.focus();
    } catch (err) {
      show(problem, errorBox(err));
      body.prepend(problem);
    }
  }

  return { section, load: () => render() };
}

/**
 * Password change (POST /v1/users/me/password): the other sessions end, this one stays; on request every
 * passkey and API key goes too (what someone else who had the account may have left behind).
 */
export function passwordSection() {
  const current = field(t('password.current'), {
    name: 'current-password',
    type: 'password',
    autocomplete: 'current-password',
    required: true,
  });
  const next = field(t('password.new'), {
    name: 'new-password',
    type: 'password',
    autocomplete: 'new-password',
    required: true,
    minlength: 8,
  });
  const again = field(t('password.repeat'), {
    name: 'repeat-password',
    type: 'password',
    autocomplete: 'new-password',
    required: true,
    minlength: 8,
  });
  const revoke = h('input', {
    type: 'checkbox',
    id: 'revoke-passkeys-and-keys',
    name: 'revoke_passkeys_and_keys',
    'aria-describedby': 'revoke-hint',
  });
  const revokeField = {
    wrapper: h(
      'div',
      {},
      h('label', { for: revoke.id }, revoke, ' ', t('password.revokeAll')),
      h('p', { id: 'revoke-hint', class: 'muted' }, t('password.revokeAllHint')),
    ),
  };
  const done = h('div', { role: 'status' });
  const element = form([current, next, again, revokeField], t('password.submit'), async () => {
    if (next.input.value !== again.input.value) throw new Error(t('password.mismatch'));
    const revoked = revoke.checked;
    const result = await post('/v1/users/me/password', {
      current_password: current.input.value,
      new_password: next.input.value,
      revoke_passkeys_and_keys: revoked,
    });
    for (const f of [current, next, again]) f.input.value = '';
    revoke.checked = false;
    show(
      done,
      h(
        'p',
        { class: 'ok' },
        t(revoked ? 'password.changedRevoked' : 'password.changed', { count: result.other_sessions_ended }),
      ),
    );
  });
  return h(
    'section',
    { 'aria-labelledby': 'password-title' },
    h('h2', { id: 'password-title' }, t('password.title')),
    element,
    done,
  );
}

/**
 * Email change: a link goes to the new address (valid 24 hours); a pending change is shown and can be cancelled.
 * @param {import('../types/console').Me} me
 */
export function emailSection(me) {
  const pending = h('div');
  const email = field(t('email.new'), {
    name: 'email',
    type: 'email',
    autocomplete: 'email',
    required: true,
    maxlength: 254,
  });
  const element = form([email], t('email.submit'), async () => {
    await post(`/v1/users/${me.userId}/email/request-change`, { email: email.input.value.trim() });
    email.input.value = '';
    await load();
  });
  async function load() {
    const state = await get(`/v1/users/${me.userId}/email/pending`);
    if (!state.pending || !state.new_email || !state.expires_at) return show(pending);
    show(
      pending,
      h(
        'p',
        { class: 'ok', role: 'status' },
        t('email.pending', { email: state.new_email, time: formatTime(state.expires_at) }),
        ' ',
        h(
          'button',
          {
            type: 'button',
            class: 'secondary',
            onclick: async () => {
              try {
                await api('DELETE', `/v1/users/${me.userId}/email/pending`);
                await load();
              } catch (err) {
                show(pending, errorBox(err));
              }
            },
          },
          t('email.cancel'),
        ),
      ),
    );
  }
  return {
    section: h(
      'section',
      { 'aria-labelledby': 'email-title' },
      h('h2', { id: 'email-title' }, t('email.title')),
      h('p', { class: 'muted' }, t('email.hint')),
      pending,
      element,
    ),
    load,
  };
}

export { form };
