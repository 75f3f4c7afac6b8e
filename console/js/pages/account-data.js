// @ts-check
import { download, get, patch, post } from '../api.js';
import { announce, errorBox, field, h, show } from '../dom.js';
import { formatTime, t } from '../i18n.js';
import { signOut } from '../session.js';
import { form } from './account-security.js';

/**
 * The personal data export (GET /v1/user/export: a zip with data.json, report.pdf, README.txt) and the
 * deletion of one's own account (POST /v1/users/me/delete with the current password; a soft delete with a
 * 7-day grace period in which an administrator can restore it). After it every session has ended: the
 * console goes back to the sign-in page and says when the account is removed for good.
 * @param {Pick<import('../types/console').PageContext, 'me' | 'can'>} context
 */
export function dataSection({ me, can }) {
  const problem = h('div');
  const exportButton = can('export:read')
    ? h(
        'button',
        {
          type: 'button',
          class: 'secondary',
          onclick: async () => {
            show(problem);
            try {
              announce(t('history.saved', { name: await download('/v1/user/export', 'data-export.zip') }));
            } catch (err) {
              show(problem, errorBox(err));
            }
          },
        },
        t('data.export'),
      )
    : null;

  const confirm = field(t('data.confirm', { name: me.username }), {
    name: 'confirm-username',
    autocomplete: 'off',
    required: true,
  });
  // Not required: an account without a password (passkey or another provider) leaves it empty and needs a recent sign-in.
  const password = field(t('data.password'), {
    name: 'delete-password',
    type: 'password',
    autocomplete: 'current-password',
    maxlength: 1024,
  });
  const deletion = form(
    [confirm, password],
    t('data.delete'),
    async () => {
      if (confirm.input.value.trim() !== me.username) throw new Error(t('data.confirmMismatch'));
      const result = await post(
        '/v1/users/me/delete',
        password.input.value ? { current_password: password.input.value } : {},
      );
      await signOut(false, t('data.deleted', { time: formatTime(result.scheduled_deletion_at) }));
    },
    { danger: true },
  );

  return h(
    'section',
    { 'aria-labelledby': 'data-title' },
    h('h2', { id: 'data-title' }, t('data.title')),
    exportButton ? h('p', {}, t('data.exportHint')) : null,
    problem,
    exportButton,
    h('h3', {}, t('data.deleteTitle')),
    h('p', {}, t('data.deleteHint')),
    h('p', { class: 'muted' }, t('data.noPasswordHint')),
    deletion,
  );
}

/**
 * The security notices that can be turned off (GET/PATCH /v1/users/me/security-notifications): a mail on a
 * sign-in from a new browser and network, and on a new API key. The others are always sent.
 */
export function noticesSection() {
  const problem = h('div');
  /** @type {('new_sign_in' | 'new_api_key')[]} */
  const names = ['new_sign_in', 'new_api_key'];
  const boxes = names.map((name) => {
    const input = h('input', { type: 'checkbox', id: `notice-${name}`, name, role: 'switch', disabled: true });
    input.addEventListener('change', async () => {
      show(problem);
      input.disabled = true;
      try {
        const settings = await patch('/v1/users/me/security-notifications', { [name]: input.checked });
        input.checked = settings[name];
        announce(t(settings[name] ? 'notices.on' : 'notices.off', { what: t(`notices.${name}`) }));
      } catch (err) {
        input.checked = !input.checked;
        show(problem, errorBox(err));
      } finally {
        input.disabled = false;
      }
    });
    return { name, input, wrapper: h('label', { for: input.id, class: 'scope' }, input, ` ${t(`notices.${name}`)}`) };
  });
  const section = h(
    'section',
    { 'aria-labelledby': 'notices-title' },
    h('h2', { id: 'notices-title' }, t('notices.title')),
    h('p', { class: 'muted' }, t('notices.hint')),
    problem,
    h('div', { class: 'card' }, ...boxes.map((box) => h('div', {}, box.wrapper))),
  );
  async function load() {
    const settings = await get('/v1/users/me/security-notifications');
    for (const box of boxes) {
      box.input.checked = settings[box.name];
      box.input.disabled = false;
    }
  }
  return { section, load };
}
