import { api, download } from '../api.js';
import { announce, errorBox, field, h, show } from '../dom.js';
import { t } from '../i18n.js';
import { signOut } from '../app.js';
import { form } from './account-security.js';

/**
 * The personal data export (GET /v1/user/export: a zip with data.json, report.pdf, README.txt) and the
 * deletion of one's own account. The API deletes accounts with users:delete only (DELETE /v1/users/{id},
 * a soft delete with a 7-day grace period in which an administrator can restore it), so the button is
 * shown to those who hold it; everyone else reads whom to ask.
 */
export function dataSection({ me, can }) {
  const problem = h('div');
  const exportButton = can('export:read') ? h('button', { type: 'button', class: 'secondary', onclick: async () => {
    show(problem);
    try {
      announce(t('history.saved', { name: await download('/v1/user/export', 'data-export.zip') }));
    } catch (err) { show(problem, errorBox(err.message)); }
  } }, t('data.export')) : null;

  let deletion;
  if (can('users:delete')) {
    const confirm = field(t('data.confirm', { name: me.username }), { name: 'confirm-username', autocomplete: 'off', required: true });
    deletion = form([confirm], t('data.delete'), async () => {
      if (confirm.input.value.trim() !== me.username) throw new Error(t('data.confirmMismatch'));
      await api('DELETE', `/v1/users/${me.userId}`);
      await signOut(false);
    }, { danger: true });
  } else deletion = h('p', { class: 'muted' }, t('data.askAdmin'));

  return h('section', { 'aria-labelledby': 'data-title' }, h('h2', { id: 'data-title' }, t('data.title')),
    exportButton ? h('p', {}, t('data.exportHint')) : null, problem, exportButton,
    h('h3', {}, t('data.deleteTitle')), h('p', {}, t('data.deleteHint')), deletion);
}
