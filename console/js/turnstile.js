// @ts-check
import { h } from './dom.js';
import { currentLocale } from './i18n.js';

/**
 * Cloudflare's Turnstile in the sign-in form when the service's bot protection is on (its site key is in
 * the page's config). The script is loaded only then, from Cloudflare, as the console's CSP allows only
 * then; it is rendered explicitly (no inline callbacks) and its answer goes into POST /v1/auth/login as
 * `turnstile_token`. A token is good for one check: after each attempt the widget is reset for a new one.
 */
const SCRIPT = 'https://challenges.cloudflare.com/turnstile/v0/api.js?render=explicit';

/** @typedef {import('./types/console').Turnstile} Turnstile */
/** @type {Promise<Turnstile> | undefined} */
let loading;

/** @returns {Promise<Turnstile>} */
function loadScript() {
  loading ??= new Promise((resolve, reject) => {
    const script = h('script', { src: SCRIPT, async: true });
    script.addEventListener('load', () =>
      window.turnstile ? resolve(window.turnstile) : reject(new Error('Turnstile did not load')),
    );
    script.addEventListener('error', () => {
      loading = undefined;
      reject(new Error('Turnstile did not load'));
    });
    document.head.append(script);
  });
  return loading;
}

/**
 * The widget's element and its current token ('' until the check is passed).
 * @param {string} siteKey
 */
export function botCheck(siteKey) {
  const element = h('div', { class: 'bot-check' });
  let token = '';
  /** @type {Turnstile | undefined} */
  let api;
  /** @type {string | undefined} */
  let widget;
  loadScript()
    .then((turnstile) => {
      api = turnstile;
      widget = turnstile.render(element, {
        sitekey: siteKey,
        language: currentLocale(),
        callback: (value) => {
          token = value;
        },
        'expired-callback': () => {
          token = '';
        },
        'error-callback': () => {
          token = '';
        },
      });
    })
    .catch(() => {});
  return {
    element,
    token: () => token,
    reset() {
      token = '';
      if (api && widget !== undefined) api.reset(widget);
    },
  };
}
