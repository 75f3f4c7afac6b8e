// @ts-check
import { del, get, patch, post } from '../api.js';
import { announce, errorBox, field, h, show } from '../dom.js';
import { formatTime, setLocale, t } from '../i18n.js';
import { dataSection, noticesSection } from './account-data.js';
import { emailSection, passwordSection, twoFactorSection } from './account-security.js';
import { reauthField } from '../reauth.js';

/**
 * The signed-in user's own account: language, sessions (revoke one, or all others), two-factor
 * authentication, password, email, the optional security notices, API keys (scopes chosen from the user's
 * own permissions, the secret shown once), the personal data export and deleting the account.
 * @param {HTMLElement} root
 * @param {import('../types/console').PageContext} context
 */
export async function mount(root, { config, me, can }) {
  const problem = h('div');
  const sessions = h('ul');
  const keys = h('ul');
  const twoFactor = twoFactorSection(me);
  const email = emailSection(me);
  const notices = noticesSection();
  const language = field(t('account.language'), { tag: 'select', name: 'locale' });
  for (const locale of config.locales)
    language.input.append(
      h(
        'option',
        { value: locale, selected: locale === (me.locale ?? '') },
        locale === 'de' ? 'Deutsch' : locale === 'en' ? 'English' : locale,
      ),
    );
  language.input.addEventListener('change', async () => {
    try {
      await patch(`/v1/users/${me.userId}/locale`, { locale: language.input.value });
      localStorage.setItem('waygate.locale', language.input.value);
      setLocale(language.input.value);
      location.reload();
    } catch (err) {
      show(problem, errorBox(err));
    }
  });
  const keySection = can('api_keys:read')
    ? h('section', { 'aria-labelledby': 'keys-title' }, h('h2', { id: 'keys-title' }, t('account.keys')), keys)
    : null;
  show(
    root,
    h(
      'div',
      { class: 'page' },
      h('h1', {}, `${t('account.title')}: ${me.username}`),
      problem,
      h('div', { class: 'card' }, language.wrapper),
      h(
        'section',
        { 'aria-labelledby': 'sessions-title' },
        h('h2', { id: 'sessions-title' }, t('account.sessions')),
        sessions,
        h('button', { type: 'button', class: 'secondary', onclick: revokeOthers }, t('account.revokeOthers')),
      ),
      twoFactor.section,
      passwordSection(),
      email.section,
      notices.section,
      keySection,
      dataSection({ me, can }),
    ),
  );

  const fail = (/** @type {unknown} */ err) => show(problem, errorBox(err));

  async function loadSessions() {
    const result = await get('/v1/users/me/sessions');
    show(
      sessions,
      ...result.sessions.map((session) => {
        const what = [session.browser_name || session.user_agent || '?', session.os_name, session.ip_address]
          .filter(Boolean)
          .join(' · ');
        return h(
          'li',
          { class: 'card' },
          h('strong', {}, what),
          ' ',
          h('span', { class: 'muted' }, t('account.lastActive', { time: formatTime(session.last_activity_at) })),
          session.is_current
            ? [' ', h('em', {}, `(${t('account.current')})`)]
            : [
                ' ',
                h(
                  'button',
                  {
                    type: 'button',
                    class: 'danger',
                    'aria-label': `${t('account.revoke')}: ${what}`,
                    onclick: async () => {
                      try {
                        await del(`/v1/users/me/sessions/${session.id}`);
                        await loadSessions();
                      } catch (err) {
                        fail(err);
                      }
                    },
                  },
                  t('account.revoke'),
                ),
              ],
        );
      }),
    );
  }

  async function revokeOthers() {
    try {
      const result = await del('/v1/users/me/sessions');
      announce(t('account.revoked', { count: result.revoked_count }));
      await loadSessions();
    } catch (err) {
      fail(err);
    }
  }

  async function loadKeys() {
    const result = await get('/v1/api-keys');
    show(
      keys,
      ...result.data.map((key) =>
        h(
          'li',
          {},
          h('strong', {}, key.name),
          ' ',
          h('code', {}, `${key.key_prefix}…`),
          ' ',
          h('span', { class: 'muted' }, key.scopes.join(', ')),
        ),
      ),
    );
    if (!result.data.length) show(keys, h('li', { class: 'muted' }, t('none')));
    if (can('api_keys:write')) keySection?.append(keyForm());
  }

  function keyForm() {
    const name = field(t('account.keyName'), { name: 'key-name', maxlength: 100, required: true });
    const scopeBoxes = me.permissions
      .filter((p) => !p.includes('*'))
      .sort()
      .map((permission) => {
        const id = `scope-${permission.replace(/[^a-z0-9]/gi, '-')}`;
        return h('input', { type: 'checkbox', id, value: permission });
      });
    const scopeLabels = scopeBoxes.map((box) => h('label', { for: box.id, class: 'scope' }, box, ` ${box.value}`));
    const secret = h('div', { role: 'status' });
    const submit = h('button', { type: 'submit' }, t('account.createKey'));
    const password = reauthField();
    const form = h(
      'form',
      { class: 'card' },
      name.wrapper,
      h('fieldset', {}, h('legend', {}, t('account.scopes')), ...scopeLabels),
      password.wrapper,
      submit,
      secret,
    );
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const scopes = scopeBoxes.filter((box) => box.checked).map((box) => box.value);
      try {
        const created = await post('/v1/api-keys', { name: name.input.value.trim(), scopes, ...password.body() });
        password.clear();
        show(secret, h('p', { class: 'ok' }, t('account.secretOnce'), ' ', h('code', { id: 'new-key' }, created.key)));
        submit.disabled = true;
        show(problem);
      } catch (err) {
        show(problem, errorBox(password.asked(err) ?? err));
      }
    });
    return form;
  }

  await Promise.all(
    [loadSessions(), twoFactor.load(), email.load(), notices.load(), keySection ? loadKeys() : null].map((step) =>
      step?.catch(fail),
    ),
  );
}
