// @ts-check
import { all, del, get, post } from '../api.js';
import { announce, confirmingButton, errorBox, field, h, show } from '../dom.js';
import { t } from '../i18n.js';
import { deletedUsersSection } from './admin-users-deleted.js';
import { newUserSection } from './admin-users-new.js';

/** The name in the address (#/admin/users/<name>, as the activity log links a user); '' when none or garbled. */
function nameInAddress() {
  try {
    return decodeURIComponent(location.hash.replace(/^#\/?/, '').split('/')[2] ?? '').slice(0, 100);
  } catch {
    return '';
  }
}

/**
 * Administration for users with users:read: the users (searched by name in the list the API returns, or by the
 * name in the address, #/admin/users/<name>, as the activity log links them; the list carries no email addresses);
 * with users:write, a new user invited by mail (admin-users-new.js); ban with a reason and duration and unban for users:ban; a user's
 * roles assigned and removed for users:write (with roles:read to list them); deletion for users:delete
 * (a second click confirms it; the 7-day grace period applies), and the deleted users in that period below
 * (admin-users-deleted.js). What the API refuses is shown as its message.
 * @param {HTMLElement} root
 * @param {import('../types/console').PageContext} context
 */
export async function mount(root, { can, config }) {
  /**
   * A user of GET /v1/users, whose items do not say whether the user is banned: `is_banned` is what this page did.
   * @typedef {import('../types/routes').Item<'/v1/users'> & { is_banned?: boolean }} User
   */
  const problem = h('div');
  const search = field(t('admin.search'), {
    name: 'search',
    type: 'search',
    autocomplete: 'off',
    value: nameInAddress(),
  });
  const rows = h('tbody');
  const manageRoles = can('users:write') && can('roles:read');
  /** @param {string} label */
  const header = (label) => h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, label));
  const page = h(
    'div',
    {},
    problem,
    h(
      'section',
      { 'aria-labelledby': 'users-title' },
      h('h2', { id: 'users-title' }, t('admin.users')),
      h(
        'form',
        {
          class: 'row',
          role: 'search',
          onsubmit: (event) => {
            event.preventDefault();
            render();
          },
        },
        search.wrapper,
        h('button', { type: 'submit' }, t('admin.searchButton')),
      ),
      h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          {},
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              h('th', { scope: 'col' }, t('admin.username')),
              manageRoles ? header(t('admin.userRoles')) : null,
              header(t('admin.ban')),
              can('users:delete') ? header(t('admin.delete')) : null,
            ),
          ),
          rows,
        ),
      ),
    ),
  );
  if (can('users:write')) page.append(newUserSection(config));
  show(root, page);
  const fail = (/** @type {unknown} */ err) => show(problem, errorBox(err));
  // A restored user is back in the list above.
  const deleted = deletedUsersSection({
    can,
    problem,
    onRestored: (user) => {
      users.push({ ...user, deleted_at: null });
      render();
    },
  });
  if (deleted.element) page.append(deleted.element);
  /** @type {User[]} */
  let users = [];
  /** @type {import('../types/routes').Schema<'Role'>[]} */
  let roles = [];

  /** @param {() => Promise<unknown>} action */
  function act(action) {
    return async () => {
      show(problem);
      try {
        await action();
      } catch (err) {
        fail(err);
      }
    };
  }

  /** @param {User} user */
  function banCell(user) {
    const cell = h('td');
    if (!can('users:ban')) return cell;
    if (user.is_banned) {
      cell.append(
        h(
          'button',
          {
            type: 'button',
            class: 'secondary',
            'aria-label': `${t('admin.unban')}: ${user.username}`,
            onclick: act(async () => {
              await del(`/v1/users/${user.id}/ban`);
              user.is_banned = false;
              render();
              announce(`${t('admin.unban')}: ${user.username}`);
            }),
          },
          t('admin.unban'),
        ),
      );
      return cell;
    }
    const reason = field(t('admin.reason', { name: user.username }), { name: 'reason', maxlength: 500 });
    const days = field(t('admin.duration'), { name: 'days', type: 'number', min: 1, step: 1 });
    const form = h(
      'form',
      { class: 'row ban' },
      reason.wrapper,
      days.wrapper,
      h(
        'button',
        { type: 'submit', class: 'danger', 'aria-label': `${t('admin.ban')}: ${user.username}` },
        t('admin.ban'),
      ),
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      act(async () => {
        const body = {
          reason: reason.input.value.trim() || undefined,
          duration_seconds: days.input.value ? Number(days.input.value) * 86_400 : null,
        };
        await post(`/v1/users/${user.id}/ban`, body);
        user.is_banned = true;
        render();
        announce(`${t('admin.banned')}: ${user.username}`);
      })();
    });
    cell.append(form);
    return cell;
  }

  /**
   * The user's roles, read when the disclosure is opened: a button removes one, a select and a button add one.
   * @param {User} user
   */
  function rolesCell(user) {
    const list = h('ul', { class: 'roles' });
    const add = field(t('admin.roleToAssign', { name: user.username }), { tag: 'select', name: 'role' });
    const assign = h('form', { class: 'row' }, add.wrapper, h('button', { type: 'submit' }, t('admin.assignRole')));
    const details = h('details', {}, h('summary', {}, t('admin.rolesOf', { name: user.username })), list, assign);
    /** @param {{ id: string, name: string }[]} held */
    const draw = (held) => {
      show(
        list,
        ...held.map((role) =>
          h(
            'li',
            {},
            role.name,
            ' ',
            h(
              'button',
              {
                type: 'button',
                class: 'secondary',
                'aria-label': t('admin.removeRole', { role: role.name, name: user.username }),
                onclick: act(async () => {
                  await del(`/v1/users/${user.id}/roles/${role.id}`);
                  draw(held.filter((other) => other.id !== role.id));
                  announce(t('admin.removeRole', { role: role.name, name: user.username }));
                }),
              },
              t('admin.remove'),
            ),
          ),
        ),
      );
      if (!held.length) show(list, h('li', { class: 'muted' }, t('none')));
      const heldIds = new Set(held.map((role) => role.id));
      show(
        add.input,
        ...roles.filter((role) => !heldIds.has(role.id)).map((role) => h('option', { value: role.id }, role.name)),
      );
    };
    details.addEventListener(
      'toggle',
      act(async () => {
        if (details.open) draw((await get(`/v1/users/${user.id}/roles`)).roles);
      }),
    );
    assign.addEventListener('submit', (event) => {
      event.preventDefault();
      act(async () => {
        const name = add.input.selectedOptions[0]?.textContent;
        draw((await post(`/v1/users/${user.id}/roles`, { role_id: add.input.value })).roles);
        announce(t('admin.roleAssigned', { role: name, name: user.username }));
      })();
    });
    return h('td', {}, details);
  }

  /** @param {User} user */
  function deleteCell(user) {
    return h(
      'td',
      {},
      confirmingButton({
        label: t('admin.delete'),
        confirmLabel: t('admin.deleteConfirm'),
        name: user.username,
        action: act(async () => {
          await del(`/v1/users/${user.id}`);
          users = users.filter((other) => other.id !== user.id);
          render();
          deleted.add({ ...user, deleted_at: new Date().toISOString() });
          announce(t('admin.deleted', { name: user.username }));
        }),
      }),
    );
  }

  /** @param {User} user */
  function row(user) {
    return h(
      'tr',
      {},
      h(
        'td',
        {},
        user.username,
        user.is_banned ? [' ', h('strong', { class: 'stale' }, `(${t('admin.banned')})`)] : null,
      ),
      manageRoles ? rolesCell(user) : null,
      banCell(user),
      can('users:delete') ? deleteCell(user) : null,
    );
  }

  function render() {
    const wanted = search.input.value.trim().toLowerCase();
    const shown = users.filter((user) => !wanted || user.username.toLowerCase().includes(wanted)).slice(0, 100);
    show(rows, ...shown.map(row));
    if (!shown.length) show(rows, h('tr', {}, h('td', { colspan: 4, class: 'muted' }, t('none'))));
  }

  try {
    [users, roles] = await Promise.all([
      all('/v1/users'),
      manageRoles ? get('/v1/roles').then((result) => result.data) : [],
    ]);
    render();
  } catch (err) {
    fail(err);
  }
}
