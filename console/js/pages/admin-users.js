import { all, del, post } from '../api.js';
import { announce, errorBox, field, h, show } from '../dom.js';
import { t } from '../i18n.js';

/**
 * Administration for users with users:read: the users (searched by name in the list the API returns;
 * the list carries no email addresses), ban with a reason and duration and unban for users:ban. What the API refuses is shown as
 * its message.
 */
export async function mount(root, { can }) {
  const problem = h('div');
  const search = field(t('admin.search'), { name: 'search', type: 'search', autocomplete: 'off' });
  const rows = h('tbody');
  show(root, h('div', {}, problem,
    h('section', { 'aria-labelledby': 'users-title' }, h('h2', { id: 'users-title' }, t('admin.users')),
      h('form', { class: 'row', role: 'search', onsubmit: (event) => { event.preventDefault(); render(); } }, search.wrapper, h('button', { type: 'submit' }, t('admin.searchButton'))),
      h('div', { class: 'table-wrap' }, h('table', {}, h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, t('admin.username')),
        h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, t('admin.ban'))))), rows)))));
  const fail = (err) => show(problem, errorBox(err.message));
  let users = [];

  function row(user) {
    const cell = h('td');
    if (can('users:ban')) {
      if (user.is_banned) {
        cell.append(h('button', { type: 'button', class: 'secondary', 'aria-label': `${t('admin.unban')}: ${user.username}`, onclick: async () => {
          try {
            await del(`/v1/users/${user.id}/ban`);
            user.is_banned = false;
            render();
            announce(`${t('admin.unban')}: ${user.username}`);
          } catch (err) { fail(err); }
        } }, t('admin.unban')));
      } else {
        const reason = field(t('admin.reason', { name: user.username }), { name: 'reason', maxlength: 500 });
        const days = field(t('admin.duration'), { name: 'days', type: 'number', min: 1, step: 1 });
        const form = h('form', { class: 'row ban' }, reason.wrapper, days.wrapper, h('button', { type: 'submit', class: 'danger', 'aria-label': `${t('admin.ban')}: ${user.username}` }, t('admin.ban')));
        form.addEventListener('submit', async (event) => {
          event.preventDefault();
          try {
            const body = { reason: reason.input.value.trim() || undefined, duration_seconds: days.input.value ? Number(days.input.value) * 86_400 : null };
            await post(`/v1/users/${user.id}/ban`, body);
            user.is_banned = true;
            render();
            announce(`${t('admin.banned')}: ${user.username}`);
          } catch (err) { fail(err); }
        });
        cell.append(form);
      }
    }
    return h('tr', {}, h('td', {}, user.username, user.is_banned ? [' ', h('strong', { class: 'stale' }, `(${t('admin.banned')})`)] : null), cell);
  }

  function render() {
    const wanted = search.input.value.trim().toLowerCase();
    const shown = users.filter((user) => !wanted || user.username.toLowerCase().includes(wanted)).slice(0, 100);
    show(rows, ...shown.map(row));
    if (!shown.length) show(rows, h('tr', {}, h('td', { colspan: 2, class: 'muted' }, t('none'))));
  }

  try {
    users = await all('/v1/users');
    render();
  } catch (err) { fail(err); }
}
