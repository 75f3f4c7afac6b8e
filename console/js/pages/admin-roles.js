// @ts-check
import { del, get, post } from '../api.js';
import { announce, errorBox, field, h, show } from '../dom.js';
import { t } from '../i18n.js';

/** The actions in the order people read them: everything, then reading before changing before deleting. */
const ACTIONS = ['*', 'read', 'read_own', 'write', 'write_own', 'delete', 'delete_own'];

/**
 * A text of the console's, or `fallback` when it has none (an area or action added to the API after the console).
 * @param {string} key
 * @param {string} fallback
 */
const textOr = (key, fallback) => (t(key) === key ? fallback : t(key));
const areaName = (/** @type {string} */ resource) => textOr(`area.${resource}`, resource);
const actionName = (/** @type {string} */ action) => textOr(`action.${action}`, action);
/** @param {string} action */
const actionRank = (action) => (ACTIONS.includes(action) ? ACTIONS.indexOf(action) : ACTIONS.length);

/**
 * Permissions by area (the resource before the colon): "everything" (*) first, then the areas by their names;
 * in each, the actions in the order of ACTIONS, the others after them by name.
 * @template {{ resource: string, action: string }} P
 * @param {P[]} permissions
 * @returns {[string, P[]][]}
 */
function areasOf(permissions) {
  /** @type {Map<string, P[]>} */
  const areas = new Map();
  for (const p of permissions) areas.set(p.resource, [...(areas.get(p.resource) ?? []), p]);
  const areaRank = (/** @type {string} */ resource) => (resource === '*' ? '' : areaName(resource));
  return [...areas]
    .sort(([a], [b]) => areaRank(a).localeCompare(areaRank(b)))
    .map(([resource, held]) => [
      resource,
      held.sort(
        (a, b) =>
          actionRank(a.action) - actionRank(b.action) || actionName(a.action).localeCompare(actionName(b.action)),
      ),
    ]);
}

/**
 * Roles and their permissions: a role chosen from the list shows what it grants, by area; with roles:write a
 * permission is given (from GET /v1/permissions, with permissions:read) or taken, and roles are created;
 * with roles:delete a role that is not a system role is deleted.
 * @param {HTMLElement} root
 * @param {import('../types/console').PageContext} context
 */
export async function mount(root, { can }) {
  const problem = h('div');
  const list = h('ul', { class: 'roles' });
  const detail = h('section', { 'aria-live': 'polite' });
  const fail = (/** @type {unknown} */ err) => show(problem, errorBox(err));
  const name = field(t('roles.name'), { name: 'role-name', required: true, maxlength: 100 });
  const description = field(t('roles.description'), { name: 'role-description', maxlength: 500 });
  const twoFactorBox = h('input', { type: 'checkbox', id: 'role-2fa', name: 'requires_two_factor' });
  const create = can('roles:write')
    ? h(
        'form',
        { class: 'card' },
        h('h2', {}, t('roles.create')),
        name.wrapper,
        description.wrapper,
        h('label', { for: 'role-2fa', class: 'scope' }, twoFactorBox, ` ${t('roles.requires2fa')}`),
        h('button', { type: 'submit' }, t('roles.create')),
      )
    : null;
  show(
    root,
    h(
      'div',
      {},
      problem,
      h('div', { class: 'split' }, h('div', {}, h('h2', {}, t('roles.list')), list), detail),
      create,
    ),
  );

  /** @typedef {import('../types/routes').Schema<'Permission'>} Permission */
  /** @type {Permission[]} */
  let permissions = [];
  /** @type {import('../types/routes').Schema<'Role'>[]} */
  let roles = [];
  async function loadRoles() {
    roles = (await get('/v1/roles')).data;
    show(
      list,
      ...roles.map((role) =>
        h(
          'li',
          {},
          h(
            'button',
            { type: 'button', class: 'secondary', onclick: () => open(role).catch(fail) },
            role.name,
            role.is_system ? h('span', { class: 'muted' }, ` (${t('roles.system')})`) : null,
          ),
        ),
      ),
    );
  }

  /** @param {import('../types/routes').Schema<'Role'>} role */
  async function open(role) {
    show(problem);
    const granted = (await get(`/v1/roles/${encodeURIComponent(role.id)}/permissions`)).data;
    /** @param {Permission} p */
    const label = (p) => `${p.resource}:${p.action}`;
    const held = new Set(granted.map((p) => p.id));
    /** @param {Permission} p */
    const take = (p) =>
      can('roles:write')
        ? h(
            'button',
            {
              type: 'button',
              class: 'secondary small',
              'aria-label': `${t('roles.take')}: ${label(p)}`,
              onclick: async () => {
                try {
                  await del(`/v1/roles/${encodeURIComponent(role.id)}/permissions/${p.id}`);
                  announce(`${t('roles.take')}: ${label(p)}`);
                  await open(role);
                } catch (err) {
                  fail(err);
                }
              },
            },
            t('roles.take'),
          )
        : null;
    const choose = field(t('roles.permission'), { tag: 'select', name: 'permission', required: true });
    // Nothing chosen at first: the first in the list is "Everything", which must not be given by one click.
    choose.input.append(
      h('option', { value: '' }, t('roles.choosePermission')),
      ...areasOf(permissions.filter((p) => !held.has(p.id))).map(([resource, ungranted]) =>
        h(
          'optgroup',
          { label: areaName(resource) },
          ...ungranted.map((p) => h('option', { value: p.id }, `${actionName(p.action)} (${label(p)})`)),
        ),
      ),
    );
    const give =
      can('roles:write') && permissions.length
        ? h(
            'form',
            {
              class: 'row',
              onsubmit: async (event) => {
                event.preventDefault();
                try {
                  await post(`/v1/roles/${encodeURIComponent(role.id)}/permissions`, {
                    permission_id: choose.input.value,
                  });
                  await open(role);
                } catch (err) {
                  fail(err);
                }
              },
            },
            choose.wrapper,
            h('button', { type: 'submit' }, t('roles.give')),
          )
        : null;
    const remove =
      can('roles:delete') && !role.is_system
        ? h(
            'button',
            {
              type: 'button',
              class: 'danger',
              onclick: async () => {
                try {
                  await del(`/v1/roles/${encodeURIComponent(role.id)}`);
                  show(detail);
                  await loadRoles();
                } catch (err) {
                  fail(err);
                }
              },
            },
            `${t('delete')}: ${role.name}`,
          )
        : null;
    show(
      detail,
      h('h2', {}, role.name),
      h(
        'p',
        { class: 'muted' },
        role.description ?? '',
        role.requires_two_factor ? ` · ${t('roles.requires2fa')}` : '',
      ),
      ...areasOf(granted).map(([resource, inArea]) =>
        h(
          'section',
          { class: 'permission-area' },
          h('h3', {}, areaName(resource)),
          h(
            'ul',
            { class: 'permissions' },
            ...inArea.map((p) =>
              h('li', {}, actionName(p.action), ' ', h('code', { class: 'muted' }, label(p)), ' ', take(p)),
            ),
          ),
        ),
      ),
      granted.length ? null : h('p', { class: 'muted' }, t('none')),
      give,
      remove,
    );
  }

  create?.addEventListener('submit', async (event) => {
    event.preventDefault();
    try {
      const { data } = await post('/v1/roles', {
        name: name.input.value.trim(),
        description: description.input.value.trim() || undefined,
        requires_two_factor: twoFactorBox.checked,
      });
      name.input.value = '';
      description.input.value = '';
      await loadRoles();
      await open(data);
    } catch (err) {
      fail(err);
    }
  });

  try {
    if (can('permissions:read')) permissions = (await get('/v1/permissions')).data;
    await loadRoles();
  } catch (err) {
    fail(err);
  }
}
