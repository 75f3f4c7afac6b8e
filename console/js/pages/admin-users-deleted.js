// @ts-check
import { all, post } from '../api.js';
import { confirmingButton, errorBox, field, h, show } from '../dom.js';
import { formatTime, t } from '../i18n.js';

// The grace period of DELETE /v1/users/{id}: the purge removes a deleted user this long after deleted_at.
const GRACE_MS = 7 * 86_400_000;

/** @typedef {import('../types/routes').Item<'/v1/users'>} User */

/**
 * The users deleted within the 7-day grace period (GET /v1/users?deleted=true): restored with users:write
 * (POST …/cancel-deletion), removed for good at once with users:delete and a reason (POST …/force-delete,
 * confirmed by a second click). Shown only to holders of one of the two; the API's refusals go to `problem`.
 * @param {{ can: (permission: string) => boolean, problem: HTMLElement, onRestored: (user: User) => void }} options
 * @returns {{ element: HTMLElement | null, add: (user: User) => void }}
 */
export function deletedUsersSection({ can, problem, onRestored }) {
  if (!can('users:write') && !can('users:delete')) return { element: null, add: () => {} };
  const rows = h('tbody');
  /** @type {User[]} */
  let users = [];
  const element = h(
    'section',
    { 'aria-labelledby': 'deleted-title' },
    h('h2', { id: 'deleted-title' }, t('admin.deletedUsers')),
    h('p', { class: 'muted' }, t('admin.deletedHint')),
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
            h('th', { scope: 'col' }, t('admin.deletedAt')),
            h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, t('admin.actions'))),
          ),
        ),
        rows,
      ),
    ),
  );

  /**
   * Runs `action`; what it answers is shown as done, what the API refuses as its message.
   * @param {() => Promise<string>} action
   */
  const act = (action) => async () => {
    show(problem);
    try {
      show(problem, h('p', { class: 'ok', role: 'status' }, await action()));
    } catch (err) {
      show(problem, errorBox(err));
    }
  };
  /** @param {User} user */
  const drop = (user) => {
    users = users.filter((other) => other.id !== user.id);
    render();
  };

  /** @param {User} user */
  function actions(user) {
    // (A form only for the ban form's compact layout: the buttons act on click, nothing is submitted.)
    const cell = h('form', { class: 'row ban', onsubmit: (event) => event.preventDefault() });
    if (can('users:write')) {
      cell.append(
        h(
          'button',
          {
            type: 'button',
            class: 'secondary',
            'aria-label': `${t('admin.restore')}: ${user.username}`,
            onclick: act(async () => {
              await post(`/v1/admin/users/${user.id}/cancel-deletion`);
              drop(user);
              onRestored(user);
              return t('admin.restored', { name: user.username });
            }),
          },
          t('admin.restore'),
        ),
      );
    }
    if (can('users:delete')) {
      const reason = field(t('admin.forceReason', { name: user.username }), {
        name: 'reason',
        maxlength: 1000,
        autocomplete: 'off',
      });
      cell.append(
        reason.wrapper,
        confirmingButton({
          label: t('admin.forceDelete'),
          confirmLabel: t('admin.forceDeleteConfirm'),
          name: user.username,
          action: act(async () => {
            await post(`/v1/admin/users/${user.id}/force-delete`, { reason: reason.input.value.trim() });
            drop(user);
            return t('admin.forceDeleted', { name: user.username });
          }),
        }),
      );
    }
    return h('td', {}, cell);
  }

  function render() {
    show(
      rows,
      ...users.map((user) =>
        h(
          'tr',
          {},
          h('td', {}, user.username),
          h(
            'td',
            {},
            user.deleted_at
              ? t('admin.deletedOn', {
                  deleted: formatTime(user.deleted_at),
                  purge: formatTime(new Date(Date.parse(user.deleted_at) + GRACE_MS)),
                })
              : '',
          ),
          actions(user),
        ),
      ),
    );
    if (!users.length) show(rows, h('tr', {}, h('td', { colspan: 3, class: 'muted' }, t('none'))));
  }

  all('/v1/users?deleted=true').then(
    (list) => {
      users = list;
      render();
    },
    (err) => show(problem, errorBox(err)),
  );
  return {
    element,
    add: (user) => {
      users.push(user);
      render();
    },
  };
}
