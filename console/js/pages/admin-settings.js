import { get, patch, put } from '../api.js';
import { errorBox, field, h, show } from '../dom.js';
import { formatTime, t } from '../i18n.js';

/**
 * Settings (GET/PUT /v1/settings) and the system config (GET/PATCH /v1/system-config): each value as JSON,
 * changed in place with settings:write. A value that is not JSON is refused here, anything else by the API.
 */
export async function mount(root, { can }) {
  const problem = h('div');
  const fail = (err) => show(problem, errorBox(err.message));
  const settings = h('tbody');
  const config = h('tbody');
  const head = () => h('thead', {}, h('tr', {}, ...['settings.key', 'settings.value', 'settings.description', 'settings.updated'].map((key) => h('th', { scope: 'col' }, t(key)))));
  show(root, h('div', {}, problem,
    h('section', { 'aria-labelledby': 'settings-title' }, h('h2', { id: 'settings-title' }, t('settings.settings')),
      h('div', { class: 'table-wrap' }, h('table', {}, head(), settings))),
    h('section', { 'aria-labelledby': 'config-title' }, h('h2', { id: 'config-title' }, t('settings.config')),
      h('div', { class: 'table-wrap' }, h('table', {}, head(), config)))));

  function valueCell(entry, save) {
    const text = JSON.stringify(entry.value);
    if (!can('settings:write')) return h('td', {}, h('code', {}, text));
    const value = field(t('settings.valueOf', { key: entry.key }), { name: 'value', value: text, spellcheck: 'false', autocomplete: 'off' });
    value.wrapper.querySelector('label').className = 'visually-hidden';
    const form = h('form', { class: 'row value' }, value.wrapper, h('button', { type: 'submit', class: 'secondary', 'aria-label': `${t('save')}: ${entry.key}` }, t('save')));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      let parsed;
      try {
        parsed = JSON.parse(value.input.value);
      } catch {
        return fail(new Error(t('settings.notJson', { key: entry.key })));
      }
      try {
        await save(parsed);
        show(problem, h('p', { class: 'ok', role: 'status' }, t('settings.saved', { key: entry.key })));
      } catch (err) { fail(err); }
    });
    return h('td', {}, form);
  }

  const row = (entry, save) => h('tr', {}, h('td', {}, h('code', {}, entry.key)), valueCell(entry, save), h('td', {}, entry.description ?? ''),
    h('td', {}, formatTime(entry.updated_at)));
  const empty = () => h('tr', {}, h('td', { colspan: 4, class: 'muted' }, t('none')));

  try {
    const [{ data: settingList }, configList] = await Promise.all([get('/v1/settings'), get('/v1/system-config')]);
    show(settings, ...settingList.map((entry) => row(entry, (value) => put(`/v1/settings/${encodeURIComponent(entry.key)}`, { value }))));
    if (!settingList.length) show(settings, empty());
    show(config, ...configList.map((entry) => row(entry, (value) => patch(`/v1/system-config/${encodeURIComponent(entry.key)}`, { value }))));
    if (!configList.length) show(config, empty());
  } catch (err) { fail(err); }
}
