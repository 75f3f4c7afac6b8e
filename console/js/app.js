// @ts-check
import { api, gql, session, whenOtherTabChanges, whenUnauthorized } from './api.js';
import { announce, h, show } from './dom.js';
import { DEFAULT_PREFERENCES, setLocale, setPreferences, t } from './i18n.js';
import { signInPage } from './pages/signin.js';
import { can, canTrack, me, signOut, whenSignedOut } from './session.js';

/**
 * The console's shell: sign-in when there is no session, otherwise the navigation of the pages the
 * user may use (each page declares the permissions it needs; what the user may not do is not shown)
 * and a hash router (#/map, #/connect, …) that mounts one page at a time into <main>.
 */
/** @type {import('./types/console').ConsoleConfig} */
const config = JSON.parse(document.getElementById('console-config')?.textContent ?? '{}');

/**
 * A page of the navigation: the permissions it needs (all of `needs`, an entry that is a list met by any one of
 * it, and one of `anyOf` when given) and its module.
 * @typedef {{ path: string, label: string, needs: (string | string[])[], anyOf?: string[], load: () => Promise<{ mount: import('./types/console').Mount }> }} Page
 */

/**
 * A tracking permission or its own-scope twin: `gps:read` reaches every device, `gps:read_own` the user's own
 * and those shared with them (docs/sharing.md). Either opens the page; the API answers in the caller's scope.
 * @param {string} permission
 */
const own = (permission) => [permission, `${permission}_own`];

/** @type {Page[]} */

const PAGES = [
  {
    path: 'map',
    label: 'nav.map',
    needs: [own('gps:read'), own('devices:read')],
    load: () => import('./pages/map.js'),
  },
  {
    path: 'history',
    label: 'nav.history',
    needs: [own('gps:read'), own('devices:read')],
    load: () => import('./pages/history.js'),
  },
  { path: 'trips', label: 'nav.trips', needs: [own('trips:read')], load: () => import('./pages/trips.js') },
  {
    path: 'geofences',
    label: 'nav.geofences',
    needs: [own('geofences:read')],
    load: () => import('./pages/geofences.js'),
  },
  {
    path: 'connect',
    label: 'nav.connect',
    needs: [own('devices:write'), 'api_keys:write', own('gps:write')],
    load: () => import('./pages/connect.js'),
  },
  // Groups, invitations and what is shared with whom: every user holds groups:read (migration 0041).
  { path: 'groups', label: 'nav.groups', needs: [], anyOf: ['groups:read'], load: () => import('./pages/groups.js') },
  { path: 'account', label: 'nav.account', needs: [], load: () => import('./pages/account.js') },
  { path: 'passkeys', label: 'nav.passkeys', needs: [], load: () => import('./pages/passkeys.js') },
  // Administration: shown to whoever may use one of its parts (admin.js shows only those parts).
  {
    path: 'admin',
    label: 'nav.admin',
    needs: [],
    anyOf: ['users:read', 'roles:read', 'audit:read', 'settings:read', 'oauth_clients:read', '*:*'],
    load: () => import('./pages/admin.js'),
  },
];

/** @param {string | string[]} need a permission, or a list of which one suffices */
const meets = (need) => (Array.isArray(need) ? need.some(can) : can(need));
/** @param {Page} page */
const allowed = (page) => page.needs.every(meets) && (!page.anyOf || page.anyOf.some(can));
/** Whether the user may open the page at #/`path` (a page links to another only then). @param {string} path */
const opens = (path) => PAGES.some((page) => page.path === path && allowed(page));

/** An element of index.html, which is there: the page is served with it. @param {string} selector */
const element = (selector) => /** @type {HTMLElement} */ (document.querySelector(selector));
const main = element('#main');
const bar = element('header.bar');
let unmount = () => {};

async function start() {
  setLocale(localStorage.getItem('waygate.locale'));
  element('.skip').textContent = t('skip');
  whenUnauthorized(() => signOut(false));
  if (!session.token) return showSignIn();
  // The page asked for is loaded while who the user is comes: its module is then ready when it is mounted (the
  // map's, with Leaflet and the clusters, takes longer to load than those three answers).
  const wanted = wantedPath();
  (PAGES.find((page) => page.path === wanted) ?? PAGES[0])?.load().catch(() => {});
  try {
    const [{ me: caller }, user, preferences] = await Promise.all([
      gql('{ me { userId roles permissions isSuperAdmin } }'),
      api('GET', '/v1/users/me'),
      // Units, time zone and coordinate format (docs/console.md); the defaults should they not load.
      api('GET', '/v1/users/me/preferences').catch(() => ({ data: DEFAULT_PREFERENCES })),
    ]);
    setPreferences(preferences.data ?? DEFAULT_PREFERENCES);
    Object.assign(me, caller, { username: user.data?.username ?? '', locale: user.data?.preferred_locale ?? null });
    if (me.locale) localStorage.setItem('waygate.locale', me.locale);
    setLocale(me.locale ?? localStorage.getItem('waygate.locale'));
  } catch {
    session.token = null;
    return showSignIn();
  }
  renderShell();
  await route();
}

/** The pages before sign-in besides the sign-in itself (#/reset-password, #/signup: pages/signed-out.js). */
const SIGNED_OUT = ['reset-password', 'signup'];

/** @param {string} [message] */
async function showSignIn(message) {
  unmount();
  unmount = () => {};
  bar.hidden = true;
  const wanted = location.hash.replace(/^#\/?/, '');
  const { turnstileSiteKey, registration } = config;
  if (SIGNED_OUT.includes(wanted) && !message) {
    const { resetPage, signUpPage } = await import('./pages/signed-out.js');
    show(main, (wanted === 'signup' ? signUpPage : resetPage)({ turnstileSiteKey }));
  } else {
    document.title = `${t('signin.title')}`;
    show(main, signInPage({ message, onSignedIn: start, turnstileSiteKey, registration }));
  }
  main.querySelector('input')?.focus();
}

whenSignedOut((message) => {
  history.replaceState(null, '', '#/');
  showSignIn(message);
  announce(message);
});

function renderShell() {
  bar.hidden = false;
  const nav = element('#nav');
  nav.setAttribute('aria-label', t('nav.label'));
  show(
    nav,
    ...PAGES.filter(allowed).map((page) => h('a', { href: `#/${page.path}`, 'data-page': page.path }, t(page.label))),
  );
  const button = element('#sign-out');
  button.textContent = t('signOut');
  button.onclick = () => signOut();
}

let routes = 0;

/** The page the address asks for ("map" for #/map/…; empty for none). */
const wantedPath = () => location.hash.replace(/^#\/?/, '').split('/')[0];

async function route() {
  if (!session.token) return;
  const wanted = wantedPath();
  const pages = PAGES.filter(allowed);
  const page = pages.find((candidate) => candidate.path === wanted) ?? pages[0];
  if (!page) return;
  for (const link of document.querySelectorAll('#nav a')) {
    if (!(link instanceof HTMLAnchorElement)) continue;
    if (link.dataset.page === page.path) {
      link.setAttribute('aria-current', 'page');
      link.scrollIntoView({ block: 'nearest', inline: 'nearest' });
    } else link.removeAttribute('aria-current');
  }
  unmount();
  unmount = () => {};
  document.title = `${t(page.label)} · Waygate`;
  // A navigation while a page's module loads or mounts wins: the slower, older page must not replace it.
  const mine = ++routes;
  const module = await page.load();
  if (mine !== routes) return;
  const container = h('div', { class: 'page-root' });
  show(main, container);
  main.className = '';
  const stop = (await module.mount(container, { config, me, can, canTrack, opens })) ?? (() => {});
  if (mine === routes) unmount = stop;
  else stop();
}

window.addEventListener('hashchange', () => {
  if (!session.token) return void showSignIn();
  route().then(() => main.focus({ preventScroll: true }));
});
// One session for every tab of the console: signed out in one, the others follow; signed in in one, the others too.
whenOtherTabChanges((signedIn) => {
  if (!signedIn && !bar.hidden) signOut(false);
  else if (signedIn && bar.hidden) start();
});
start();
