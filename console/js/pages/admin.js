// @ts-check
import { h, show } from '../dom.js';
import { t } from '../i18n.js';

/**
 * Administration: one part at a time (#/admin/users, #/admin/roles, …), each shown only to users holding
 * its permission. What the API then refuses is shown by the part as the API's message.
 */
const PARTS = [
  { path: 'users', label: 'admin.users', anyOf: ['users:read'], load: () => import('./admin-users.js') },
  { path: 'roles', label: 'admin.roles', anyOf: ['roles:read'], load: () => import('./admin-roles.js') },
  { path: 'audit', label: 'admin.audit', anyOf: ['audit:read'], load: () => import('./admin-audit.js') },
  {
    path: 'clients',
    label: 'admin.clients',
    anyOf: ['*:*', 'oauth_clients:read'],
    load: () => import('./admin-clients.js'),
  },
  { path: 'settings', label: 'admin.settings', anyOf: ['settings:read'], load: () => import('./admin-settings.js') },
];

/**
 * @param {HTMLElement} root
 * @param {import('../types/console').PageContext} context
 */
export async function mount(root, context) {
  const parts = PARTS.filter((part) => part.anyOf.some(context.can));
  const wanted = location.hash.replace(/^#\/?/, '').split('/')[1];
  const part = parts.find((candidate) => candidate.path === wanted) ?? parts[0];
  const body = h('div');
  show(
    root,
    h(
      'div',
      { class: 'page admin' },
      h('h1', {}, `${t('admin.title')}: ${t(part.label)}`),
      h(
        'nav',
        { class: 'tabs', 'aria-label': t('admin.title') },
        ...parts.map((candidate) =>
          h(
            'a',
            {
              href: `#/admin/${candidate.path}`,
              'aria-current': candidate === part ? 'page' : undefined,
            },
            t(candidate.label),
          ),
        ),
      ),
      body,
    ),
  );
  const module = await part.load();
  return module.mount(body, context);
}
