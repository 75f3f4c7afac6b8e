// @ts-check
import { all, get, patch } from '../api.js';
import { errorBox, field, h, show } from '../dom.js';
import { formatTime, t } from '../i18n.js';

const SOURCES = ['api', 'id', 'backend', 'policies', 'community_bot', 'stream_bot'];
const REPORT_STATES = ['pending', 'reviewed', 'resolved', 'dismissed'];
/**
 * A select of `values` (and "any", empty), each shown as `labelOf(value)`.
 * @param {string} label
 * @param {string} name
 * @param {string[]} values
 */
const select = (label, name, values, labelOf = (/** @type {string} */ value) => value) => {
  const f = field(label, { tag: 'select', name });
  f.input.append(
    h('option', { value: '' }, t('audit.any')),
    ...values.map((value) => h('option', { value }, labelOf(value))),
  );
  return f;
};

/**
 * The activity log of every user (GET /v1/admin/audit, audit:read) with its filters and pages of 50, users named
 * (with users:read) and linked to the Users page, and
 * the queue of events users reported (GET /v1/admin/audit/reports), whose status an admin with
 * audit:write sets with a note for the reporting user.
 * @param {HTMLElement} root
 * @param {import('../types/console').PageContext} context
 */
export async function mount(root, { can }) {
  const problem = h('div');
  const fail = (/** @type {unknown} */ err) => show(problem, errorBox(err));
  const filters = {
    user_search: field(t('audit.user'), { name: 'user_search', type: 'search', maxlength: 320 }),
    event_type: field(t('audit.event'), { name: 'event_type', maxlength: 60, placeholder: 'login_success' }),
    status: select(t('audit.status'), 'status', ['success', 'failure']),
    source_service: select(t('audit.source'), 'source_service', SOURCES),
    start_date: field(t('audit.from'), { name: 'start_date', type: 'date' }),
    end_date: field(t('audit.to'), { name: 'end_date', type: 'date' }),
    is_reported: select(t('audit.reported'), 'is_reported', ['true', 'false'], (value) =>
      t(value === 'true' ? 'audit.yes' : 'audit.no'),
    ),
  };
  const rows = h('tbody');
  const pager = h('div', { class: 'row pager' });
  const reports = h('div');
  const reportStatus = select(t('audit.reportStatus'), 'report_status', REPORT_STATES, (value) => t(`report.${value}`));
  reportStatus.input.value = '';
  const form = h(
    'form',
    { class: 'row card filters', role: 'search', 'aria-label': t('audit.filters') },
    ...Object.values(filters).map((f) => f.wrapper),
    h('button', { type: 'submit' }, t('audit.apply')),
  );
  show(
    root,
    h(
      'div',
      {},
      problem,
      form,
      h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          {},
          h('caption', { class: 'visually-hidden' }, t('admin.audit')),
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              ...[
                'audit.time',
                'audit.event',
                'audit.userColumn',
                'audit.status',
                'audit.where',
                'audit.description',
              ].map((key) => h('th', { scope: 'col' }, t(key))),
            ),
          ),
          rows,
        ),
      ),
      pager,
      h(
        'section',
        { 'aria-labelledby': 'reports-title' },
        h('h2', { id: 'reports-title' }, t('audit.reports')),
        h('div', { class: 'row' }, reportStatus.wrapper),
        reports,
      ),
    ),
  );

  /**
   * Usernames by id, read once for the page (users:read; every page of GET /v1/users, up to 2,000 users) instead of
   * once per row. A user it does not name (deleted, or beyond those) is shown by id.
   * @type {Promise<Map<string, string>>}
   */
  const usernames = can('users:read')
    ? all('/v1/users').then(
        (users) => new Map(users.map((user) => [user.id, user.username])),
        () => new Map(),
      )
    : Promise.resolve(new Map());
  /**
   * A user by name, linked to them on the Users page; by id when the name is not known.
   * @param {Map<string, string>} names
   * @param {string} id
   */
  const userLink = (names, id) => {
    const name = names.get(id);
    return name ? h('a', { href: `#/admin/users/${encodeURIComponent(name)}` }, name) : h('code', {}, id);
  };
  /**
   * Who the event is of, and who acted when that was someone else (an administrator, say).
   * @param {Map<string, string>} names
   * @param {import('../types/routes').Schema<'AuditEvent'>} event
   */
  const whoCell = (names, event) =>
    h(
      'td',
      {},
      event.user_id ? userLink(names, event.user_id) : '–',
      event.actor_id && event.actor_id !== event.user_id
        ? [' ', h('span', { class: 'muted' }, `(${t('audit.by')} `, userLink(names, event.actor_id), ')')]
        : null,
    );

  // Only the answer to the latest request is shown: a slow unfiltered first page must not overwrite a filtered one.
  let latest = 0;
  async function load(page = 1) {
    const query = new URLSearchParams({ page: String(page), limit: '50' });
    for (const [name, f] of Object.entries(filters)) if (f.input.value.trim()) query.set(name, f.input.value.trim());
    const asked = ++latest;
    try {
      const [result, names] = await Promise.all([get(`/v1/admin/audit?${query}`), usernames]);
      if (asked !== latest) return;
      show(problem);
      show(
        rows,
        ...result.events.map((event) =>
          h(
            'tr',
            {},
            h('td', {}, h('time', { datetime: event.created_at }, formatTime(event.created_at))),
            h(
              'td',
              {},
              h('code', {}, event.event_type),
              event.is_reported ? h('strong', { class: 'stale' }, ` (${t('audit.reportedMark')})`) : null,
            ),
            whoCell(names, event),
            h('td', {}, event.status),
            h('td', {}, [event.ip_address, event.country_code].filter(Boolean).join(' · ') || '–'),
            h('td', {}, event.description ?? ''),
          ),
        ),
      );
      if (!result.events.length) show(rows, h('tr', {}, h('td', { colspan: 6, class: 'muted' }, t('none'))));
      show(
        pager,
        h(
          'span',
          { class: 'muted' },
          t('audit.page', { page: result.page, pages: Math.max(1, result.total_pages), total: result.total_count }),
        ),
        page > 1
          ? h('button', { type: 'button', class: 'secondary', onclick: () => load(page - 1) }, t('audit.previous'))
          : null,
        page < result.total_pages
          ? h('button', { type: 'button', class: 'secondary', onclick: () => load(page + 1) }, t('audit.next'))
          : null,
      );
    } catch (err) {
      fail(err);
    }
  }

  /**
   * @param {import('../types/routes').Schema<'AuditReport'>} report
   * @param {Map<string, string>} names
   */
  function reportItem(report, names) {
    const status = select(t('audit.setStatus'), 'status', REPORT_STATES.slice(1), (value) => t(`report.${value}`));
    status.input.firstChild?.remove();
    const notes = field(t('audit.notes'), { tag: 'textarea', name: 'resolution_notes', maxlength: 2000, rows: 2 });
    const decide = can('audit:write')
      ? h(
          'form',
          {
            class: 'row',
            onsubmit: async (event) => {
              event.preventDefault();
              try {
                await patch(`/v1/admin/audit/reports/${report.id}`, {
                  status: status.input.value,
                  resolution_notes: notes.input.value.trim() || undefined,
                });
                await loadReports();
              } catch (err) {
                fail(err);
              }
            },
          },
          status.wrapper,
          notes.wrapper,
          h('button', { type: 'submit' }, t('save')),
        )
      : null;
    return h(
      'li',
      { class: 'card' },
      h('strong', {}, t(`reason.${report.reason}`)),
      ' · ',
      t(`report.${report.status}`),
      ' · ',
      formatTime(report.created_at),
      h('p', {}, report.description ?? ''),
      h(
        'p',
        { class: 'muted' },
        t('audit.eventOf', { event: report.audit_event_id, user: names.get(report.user_id) ?? report.user_id }),
      ),
      report.resolution_notes ? h('p', {}, report.resolution_notes) : null,
      report.status === 'pending' ? decide : null,
    );
  }

  async function loadReports() {
    try {
      const query = new URLSearchParams(reportStatus.input.value ? { status: reportStatus.input.value } : {});
      const [list, names] = await Promise.all([get(`/v1/admin/audit/reports?${query}`), usernames]);
      show(
        reports,
        list.length
          ? h('ul', {}, ...list.map((report) => reportItem(report, names)))
          : h('p', { class: 'muted' }, t('none')),
      );
    } catch (err) {
      fail(err);
    }
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    load(1);
  });
  reportStatus.input.addEventListener('change', loadReports);
  await Promise.all([load(1), loadReports()]);
}
