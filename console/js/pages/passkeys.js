// @ts-check
import { del, get, patch, post } from '../api.js';
import { announce, errorBox, field, h, show } from '../dom.js';
import { formatTime, t } from '../i18n.js';
import { reauthField } from '../reauth.js';
import { createPasskey, passkeysSupported } from '../webauthn.js';

/**
 * The signed-in user's passkeys (/v1/users/me/passkeys): add one with this browser or a security key,
 * rename, remove. A passkey that verifies the user (PIN, fingerprint) signs in without a password and
 * without a code.
 * @param {HTMLElement} root
 */
export async function mount(root) {
  const problem = h('div');
  const list = h('ul');
  const name = field(t('passkeys.name'), {
    name: 'passkey-name',
    maxlength: 100,
    placeholder: t('passkeys.namePlaceholder'),
  });
  const add = h('button', { type: 'submit' }, t('passkeys.add'));
  const password = reauthField();
  const form = h('form', { class: 'card' }, name.wrapper, password.wrapper, add);
  const fail = (/** @type {unknown} */ err) =>
    show(
      problem,
      errorBox(
        err instanceof Error && err.name === 'NotAllowedError' ? t('passkeys.cancelled') : (password.asked(err) ?? err),
      ),
    );

  show(
    root,
    h(
      'div',
      { class: 'page' },
      h('h1', {}, t('passkeys.title')),
      h('p', {}, t('passkeys.intro')),
      problem,
      h(
        'section',
        { 'aria-labelledby': 'passkeys-list-title' },
        h('h2', { id: 'passkeys-list-title' }, t('passkeys.yours')),
        list,
      ),
      passkeysSupported() ? form : h('p', { class: 'muted' }, t('passkeys.unsupported')),
    ),
  );

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    add.disabled = true;
    show(problem);
    try {
      const response = await createPasskey(await post('/v1/users/me/passkeys/options', password.body()));
      password.clear();
      const created = await post('/v1/users/me/passkeys', {
        ...(name.input.value.trim() ? { name: name.input.value.trim() } : {}),
        response,
      });
      name.input.value = '';
      announce(t('passkeys.added', { name: created.name }));
      await load();
    } catch (err) {
      fail(err);
    } finally {
      add.disabled = false;
    }
  });

  /** @param {import('../types/routes').Item<'/v1/users/me/passkeys'>} passkey */
  function row(passkey) {
    const rename = field(t('passkeys.rename', { name: passkey.name }), {
      name: 'rename',
      value: passkey.name,
      maxlength: 100,
      required: true,
    });
    const renameForm = h(
      'form',
      { class: 'inline' },
      rename.wrapper,
      h('button', { type: 'submit', class: 'secondary' }, t('passkeys.save')),
    );
    renameForm.addEventListener('submit', async (event) => {
      event.preventDefault();
      try {
        await patch(`/v1/users/me/passkeys/${passkey.id}`, { name: rename.input.value.trim() });
        await load();
      } catch (err) {
        fail(err);
      }
    });
    const facts = [
      passkey.device_type === 'multiDevice' ? t('passkeys.synced') : t('passkeys.device'),
      passkey.user_verified ? t('passkeys.verifies') : null,
      t('passkeys.created', { time: formatTime(passkey.created_at) }),
      passkey.last_used_at
        ? t('passkeys.lastUsed', { time: formatTime(passkey.last_used_at) })
        : t('passkeys.neverUsed'),
    ]
      .filter(Boolean)
      .join(' · ');
    return h(
      'li',
      { class: 'card' },
      h('strong', {}, passkey.name),
      ' ',
      h('span', { class: 'muted' }, facts),
      renameForm,
      h(
        'button',
        {
          type: 'button',
          class: 'danger',
          'aria-label': `${t('passkeys.remove')}: ${passkey.name}`,
          onclick: async () => {
            try {
              await del(`/v1/users/me/passkeys/${passkey.id}`);
              announce(t('passkeys.removed', { name: passkey.name }));
              await load();
            } catch (err) {
              fail(err);
            }
          },
        },
        t('passkeys.remove'),
      ),
    );
  }

  async function load() {
    const { data } = await get('/v1/users/me/passkeys');
    show(list, ...(data.length ? data.map(row) : [h('li', { class: 'muted' }, t('passkeys.none'))]));
  }

  await load().catch(fail);
}
