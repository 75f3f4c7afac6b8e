// @ts-check
import { del, get, patch, post } from '../api.js';
import { announce, errorBox, field, h, show } from '../dom.js';
import { t } from '../i18n.js';

/**
 * OAuth clients: every client for a super admin (GET /v1/oauth/clients/all), one's own otherwise
 * (oauth_clients:read). Register one (its secret shown once), switch one off and on, delete one.
 * @param {HTMLElement} root
 * @param {import('../types/console').PageContext} context
 */
export async function mount(root, { can }) {
  const problem = h('div');
  const fail = (/** @type {unknown} */ err) => show(problem, errorBox(err));
  const rows = h('tbody');
  const name = field(t('clients.name'), { name: 'client-name', required: true, maxlength: 100 });
  const redirects = field(t('clients.redirects'), {
    tag: 'textarea',
    name: 'redirect_uris',
    required: true,
    rows: 2,
    placeholder: 'https://app.example.org/callback',
  });
  const type = field(t('clients.type'), { tag: 'select', name: 'client_type' });
  type.input.append(
    h('option', { value: 'confidential' }, t('clients.confidential')),
    h('option', { value: 'public' }, t('clients.public')),
  );
  const secret = h('div', { role: 'status' });
  const writable = can('*:*') || can('oauth_clients:write');
  const create = writable
    ? h(
        'form',
        { class: 'card' },
        h('h2', {}, t('clients.create')),
        name.wrapper,
        redirects.wrapper,
        type.wrapper,
        h('button', { type: 'submit' }, t('clients.create')),
        secret,
      )
    : null;
  show(
    root,
    h(
      'div',
      {},
      problem,
      h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          {},
          h('caption', { class: 'visually-hidden' }, t('admin.clients')),
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              ...['clients.name', 'clients.type', 'clients.redirectColumn', 'clients.state'].map((key) =>
                h('th', { scope: 'col' }, t(key)),
              ),
              h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, t('clients.actions'))),
            ),
          ),
          rows,
        ),
      ),
      create,
    ),
  );

  /** @param {import('../types/routes').Schema<'OAuthClient'>} client */
  function row(client) {
    /** @param {string} label @param {() => Promise<unknown>} action */
    const act = (label, action) =>
      h(
        'button',
        {
          type: 'button',
          class: label === t('delete') ? 'danger' : 'secondary',
          'aria-label': `${label}: ${client.name}`,
          onclick: async () => {
            try {
              await action();
              announce(`${label}: ${client.name}`);
              await load();
            } catch (err) {
              fail(err);
            }
          },
        },
        label,
      );
    const actions =
      writable && !client.is_first_party
        ? [
            act(client.is_active ? t('clients.deactivate') : t('clients.activate'), () =>
              patch(`/v1/oauth/clients/${client.id}`, { is_active: !client.is_active }),
            ),
            can('*:*') || can('oauth_clients:delete')
              ? act(t('delete'), () => del(`/v1/oauth/clients/${client.id}`))
              : null,
          ]
        : [];
    return h(
      'tr',
      {},
      h('td', {}, h('strong', {}, client.name), h('br'), h('code', {}, client.id)),
      h('td', {}, t(`clients.${client.client_type}`), client.is_first_party ? ` · ${t('clients.firstParty')}` : ''),
      h('td', {}, ...client.redirect_uris.flatMap((uri) => [h('code', {}, uri), h('br')])),
      h('td', {}, client.is_active ? t('clients.active') : t('clients.inactive')),
      h('td', {}, h('div', { class: 'row' }, ...actions)),
    );
  }

  async function load() {
    const { data } = await get(can('*:*') ? '/v1/oauth/clients/all' : '/v1/oauth/clients');
    show(rows, ...data.map(row));
    if (!data.length) show(rows, h('tr', {}, h('td', { colspan: 5, class: 'muted' }, t('none'))));
  }

  create?.addEventListener('submit', async (event) => {
    event.preventDefault();
    try {
      const uris = redirects.input.value.split(/\s+/).filter(Boolean);
      const result = await post('/v1/oauth/clients', {
        name: name.input.value.trim(),
        redirect_uris: uris,
        client_type: type.input.value === 'public' ? 'public' : 'confidential',
      });
      show(
        secret,
        h(
          'p',
          { class: 'ok' },
          t('clients.created', { id: result.client.id }),
          ' ',
          result.client_secret
            ? [t('clients.secretOnce'), ' ', h('code', { id: 'client-secret' }, result.client_secret)]
            : null,
        ),
      );
      show(problem);
      await load();
    } catch (err) {
      fail(err);
    }
  });

  await load().catch(fail);
}
