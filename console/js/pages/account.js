// @ts-check
import { del, get, patch } from '../api.js';
import { announce, errorBox, field, h, show } from '../dom.js';
import { formatTime, setLocale, t } from '../i18n.js';
import { dataSection, noticesSection } from './account-data.js';
import { emailSection, passwordSection, twoFactorSection } from './account-security.js';
import { keysSection } from './account-keys.js';
import { preferencesSection } from './account-preferences.js';

/**
 * The signed-in user's own account: language, units and time zone, sessions (revoke one, or all others), two-factor
 * authentication, password, email, the optional security notices, API keys (scopes chosen from the user's
 * own permissions, the secret shown once), the personal data export and deleting the account.
 * @param {HTMLElement} root
 * @param {import('../types/console').PageContext} context
 */
export async function mount(root, { config, me, can, canTrack }) {
  const problem = h('div');
  const sessions = h('ul');
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
  const keys = can('api_keys:read') ? keysSection({ me, can, canTrack }) : null;
  show(
    root,
    h(
      'div',
      { class: 'page' },
      h('h1', {}, `${t('account.title')}: ${me.username}`),
      problem,
      h('div', { class: 'card' }, language.wrapper),
      preferencesSection(),
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
      keys?.section,
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

  await Promise.all(
    [loadSessions(), twoFactor.load(), email.load(), notices.load(), keys?.load()].map((step) => step?.catch(fail)),
  );
}
