// @ts-check
import { del, get, patch, post, put } from '../api.js';
import { confirmingButton, errorBox, field, h, show } from '../dom.js';
import { formatTime, t } from '../i18n.js';
import { parseJson, valueEditor } from './admin-settings-value.js';

/**
 * Settings (GET/POST/PUT/DELETE /v1/settings) and the system config (GET/PATCH /v1/system-config): each value
 * changed in place with settings:write, in a field of its type where the entry says it (value_schema: a checkbox,
 * a number within its limits), else as JSON; a new setting created with settings:write and one deleted
 * (a second click confirms) with settings:delete. The system config has no create or delete in the API.
 * A value that is not JSON is refused here, anything else by the API with its message.
 * @param {HTMLElement} root
 * @param {import('../types/console').PageContext} context
 */
export async function mount(root, { can }) {
  const problem = h('div');
  const fail = (/** @type {unknown} */ err) => show(problem, errorBox(err));
  /** @param {string} message */
  const done = (message) => show(problem, h('p', { class: 'ok', role: 'status' }, message));
  const settings = h('tbody');
  const config = h('tbody');
  /** @param {boolean} withDelete @param {string} valueHeader */
  const head = (withDelete, valueHeader) =>
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ...['settings.key', valueHeader, 'settings.description', 'settings.updated'].map((key) =>
          h('th', { scope: 'col' }, t(key)),
        ),
        withDelete ? h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, t('settings.delete'))) : null,
      ),
    );
  const deletable = can('settings:delete');
  show(
    root,
    h(
      'div',
      {},
      problem,
      h(
        'section',
        { 'aria-labelledby': 'settings-title' },
        h('h2', { id: 'settings-title' }, t('settings.settings')),
        h(
          'div',
          // Focusable: on a narrow screen the table scrolls sideways, which a keyboard must be able to do.
          { class: 'table-wrap', tabindex: 0, role: 'group', 'aria-labelledby': 'settings-title' },
          h('table', {}, head(deletable, 'settings.value'), settings),
        ),
        can('settings:write') ? createForm() : null,
      ),
      h(
        'section',
        { 'aria-labelledby': 'config-title' },
        h('h2', { id: 'config-title' }, t('settings.config')),
        h(
          'div',
          { class: 'table-wrap', tabindex: 0, role: 'group', 'aria-labelledby': 'config-title' },
          h('table', {}, head(false, 'settings.configValue'), config),
        ),
      ),
    ),
  );

  /**
   * A setting or a system config value, as both lists show them.
   * @typedef {{ key: string, value?: unknown, value_schema?: unknown, description?: string | null, updated_at: string }} Entry
   */

  /** @param {Entry} entry @param {(value: unknown) => Promise<unknown>} save */
  function valueCell(entry, save) {
    if (!can('settings:write')) return h('td', {}, h('code', {}, JSON.stringify(entry.value)));
    const editor = valueEditor(entry);
    const form = h(
      'form',
      { class: 'row value' },
      editor.element,
      h('button', { type: 'submit', class: 'secondary', 'aria-label': `${t('save')}: ${entry.key}` }, t('save')),
    );
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      try {
        await save(editor.read());
        done(t('settings.saved', { key: entry.key }));
      } catch (err) {
        fail(err);
      }
    });
    return h('td', {}, form);
  }

  /** @param {Entry} entry */
  function deleteCell(entry) {
    return h(
      'td',
      {},
      confirmingButton({
        label: t('settings.delete'),
        confirmLabel: t('settings.deleteConfirm'),
        name: entry.key,
        action: async () => {
          try {
            await del(`/v1/settings/${encodeURIComponent(entry.key)}`);
            await loadSettings();
            done(t('settings.deleted', { key: entry.key }));
          } catch (err) {
            fail(err);
          }
        },
      }),
    );
  }

  function createForm() {
    const key = field(t('settings.newKey'), {
      name: 'key',
      required: true,
      autocomplete: 'off',
      spellcheck: 'false',
      autocapitalize: 'none',
    });
    const value = field(t('settings.newValue'), {
      name: 'value',
      required: true,
      autocomplete: 'off',
      spellcheck: 'false',
    });
    const description = field(t('settings.newDescription'), { name: 'description', maxlength: 1000 });
    const isPublic = h('input', { type: 'checkbox', id: 'setting-public', name: 'is_public' });
    const form = h(
      'form',
      { class: 'card', 'aria-labelledby': 'new-setting-title' },
      h('h3', { id: 'new-setting-title' }, t('settings.new')),
      key.wrapper,
      value.wrapper,
      description.wrapper,
      h('label', { for: 'setting-public', class: 'scope' }, isPublic, ` ${t('settings.public')}`),
      h('button', { type: 'submit' }, t('settings.create')),
    );
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const name = key.input.value.trim();
      try {
        const body = {
          key: name,
          value: parseJson(value.input.value, name),
          description: description.input.value.trim() || undefined,
          is_public: isPublic.checked,
        };
        await post('/v1/settings', body);
        await loadSettings();
        form.reset();
        done(t('settings.created', { key: name }));
      } catch (err) {
        fail(err);
      }
    });
    return form;
  }

  /** @param {Entry} entry @param {(value: unknown) => Promise<unknown>} save @param {boolean} [remove] */
  const row = (entry, save, remove) =>
    h(
      'tr',
      {},
      h('td', {}, h('code', {}, entry.key)),
      valueCell(entry, save),
      h('td', {}, entry.description ?? ''),
      h('td', {}, formatTime(entry.updated_at)),
      remove ? deleteCell(entry) : null,
    );
  /** @param {number} columns */
  const empty = (columns) => h('tr', {}, h('td', { colspan: columns, class: 'muted' }, t('none')));

  async function loadSettings() {
    const { data } = await get('/v1/settings');
    show(
      settings,
      ...data.map((entry) =>
        row(entry, (value) => put(`/v1/settings/${encodeURIComponent(entry.key)}`, { value }), deletable),
      ),
    );
    if (!data.length) show(settings, empty(deletable ? 5 : 4));
  }

  try {
    const [configList] = await Promise.all([get('/v1/system-config'), loadSettings()]);
    show(
      config,
      ...configList.map((entry) =>
        row(entry, (value) => patch(`/v1/system-config/${encodeURIComponent(entry.key)}`, { value })),
      ),
    );
    if (!configList.length) show(config, empty(4));
  } catch (err) {
    fail(err);
  }
}
