// @ts-check
import { all, del, get, post } from '../api.js';
import { announce, confirmingButton, errorBox, field, h, show } from '../dom.js';
import { formatTime, t } from '../i18n.js';
import { reauthField } from '../reauth.js';

/** @typedef {import('../types/routes').Schema<'ApiKey'>} ApiKey */
/** @typedef {import('../types/routes').Schema<'Device'>} Device */

/**
 * The Account page's API keys (GET /v1/api-keys): each with its scopes, the device it is linked to (from the
 * devices the user sees: a key knows no device, a device its key), when it was last used, and Revoke (DELETE
 * /v1/api-keys/{id}, confirmed by a second click). A super admin's list also holds other users' and system keys:
 * those come apart, folded. Then a new key, scopes chosen from the user's own; a key without scopes is made only
 * after a warning saying what it can do, and a second click.
 * @param {{ me: import('../types/console').Me, can: (permission: string) => boolean, canTrack: (permission: string) => boolean }} context
 */
export function keysSection({ me, can, canTrack }) {
  const problem = h('div');
  const mine = h('ul', { class: 'keys' });
  const others = h('ul', { class: 'keys' });
  const otherKeys = h(
    'details',
    { class: 'other-keys', hidden: true },
    h('summary', {}, t('account.otherKeys')),
    others,
  );
  const form = can('api_keys:write') ? keyForm({ me, problem, onCreated: () => load() }) : null;
  const section = h(
    'section',
    { 'aria-labelledby': 'keys-title' },
    h('h2', { id: 'keys-title' }, t('account.keys')),
    problem,
    mine,
    otherKeys,
    form,
  );

  async function load() {
    const [{ data: keys }, devices] = await Promise.all([
      get('/v1/api-keys'),
      // The device names only: without them a key is still listed.
      canTrack('devices:read') ? all('/v1/devices').catch(() => /** @type {Device[]} */ ([])) : [],
    ]);
    /** @type {Map<string, Device>} key id → the device linked to it */
    const deviceOf = new Map(devices.flatMap((device) => (device.api_key_id ? [[device.api_key_id, device]] : [])));
    const own = keys.filter((key) => key.user_id === me.userId);
    const rest = keys.filter((key) => key.user_id !== me.userId);
    show(mine, ...own.map((key) => row(key, deviceOf.get(key.id))));
    if (!own.length) show(mine, h('li', { class: 'muted' }, t('none')));
    show(others, ...rest.map((key) => row(key, deviceOf.get(key.id))));
    otherKeys.hidden = rest.length === 0;
  }

  /**
   * A key: its name and prefix, then scopes, device, last use (and expiry, and whether it is switched off).
   * @param {ApiKey} key
   * @param {Device | undefined} device
   */
  function row(key, device) {
    const facts = [
      key.scopes.length ? key.scopes.join(', ') : t('account.keyNoScopes'),
      device ? t('account.keyDevice', { name: device.name }) : t('account.keyNoDevice'),
      key.last_used_at ? t('account.keyLastUsed', { time: formatTime(key.last_used_at) }) : t('account.keyNeverUsed'),
      key.expires_at ? t('account.keyExpires', { time: formatTime(key.expires_at) }) : null,
      key.is_system ? t('account.keySystem') : null,
      key.is_active ? null : t('account.keyInactive'),
    ].filter(Boolean);
    const revoke = can('api_keys:delete')
      ? confirmingButton({
          label: t('account.revokeKey'),
          confirmLabel: t('account.revokeConfirm'),
          name: key.name,
          action: async () => {
            try {
              await del(`/v1/api-keys/${key.id}`);
              announce(t('account.keyRevoked', { name: key.name }));
              show(problem);
              await load();
              /** @type {HTMLElement | null} */ (section.querySelector('h2'))?.focus();
            } catch (err) {
              show(problem, errorBox(err));
            }
          },
        })
      : null;
    revoke?.classList.add('small');
    return h(
      'li',
      { class: 'card key', 'data-key': key.id },
      h('div', {}, h('strong', {}, key.name), ' ', h('code', {}, `${key.key_prefix}…`)),
      h('p', { class: 'muted' }, facts.join(' · ')),
      revoke,
    );
  }

  return { section, load };
}

/**
 * A new API key: its name and scopes (from the user's own permissions), the secret shown once. Without a scope the
 * first click only warns what such a key can do (as the API says when it makes one); the second makes it.
 * @param {{ me: import('../types/console').Me, problem: HTMLElement, onCreated: () => Promise<void> }} options
 */
function keyForm({ me, problem, onCreated }) {
  const name = field(t('account.keyName'), { name: 'key-name', maxlength: 100, required: true });
  const scopeBoxes = me.permissions
    .filter((p) => !p.includes('*'))
    .sort()
    .map((permission) => {
      const id = `scope-${permission.replace(/[^a-z0-9]/gi, '-')}`;
      return h('input', { type: 'checkbox', id, value: permission });
    });
  const scopeLabels = scopeBoxes.map((box) => h('label', { for: box.id, class: 'scope' }, box, ` ${box.value}`));
  const warning = h('div');
  const secret = h('div', { role: 'status' });
  const submit = h('button', { type: 'submit' }, t('account.createKey'));
  const password = reauthField();
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'new-key-title' },
    h('h3', { id: 'new-key-title' }, t('account.newKey')),
    name.wrapper,
    h('fieldset', {}, h('legend', {}, t('account.scopes')), ...scopeLabels),
    warning,
    password.wrapper,
    submit,
    secret,
  );
  /** Whether the user was warned about a key without scopes and may now make one. */
  let warned = false;
  const unwarn = () => {
    warned = false;
    show(warning);
    submit.textContent = t('account.createKey');
  };
  for (const box of scopeBoxes) box.addEventListener('change', unwarn);

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const scopes = scopeBoxes.filter((box) => box.checked).map((box) => box.value);
    if (!scopes.length && !warned) {
      warned = true;
      show(warning, h('p', { class: 'warning', role: 'alert' }, t('account.noScopesWarning')));
      submit.textContent = t('account.createWithoutScopes');
      return;
    }
    submit.disabled = true;
    try {
      const created = await post('/v1/api-keys', { name: name.input.value.trim(), scopes, ...password.body() });
      password.clear();
      show(problem);
      form.reset();
      unwarn();
      show(secret, h('p', { class: 'ok' }, t('account.secretOnce'), ' ', h('code', { id: 'new-key' }, created.key)));
      await onCreated();
    } catch (err) {
      show(problem, errorBox(password.asked(err) ?? err));
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}
