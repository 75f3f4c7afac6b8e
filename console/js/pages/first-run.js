// @ts-check
import { ApiError } from '../api.js';
import { announce, errorBox, h, show } from '../dom.js';
import { formatNumber, formatPosition, t } from '../i18n.js';
import { reauthField } from '../reauth.js';

/**
 * What the empty map offers (docs/console.md): connect your phone (Connect a device), import history (History's
 * import), or track this browser now (browser-tracker.js), so that someone sees Waygate work within seconds. The
 * browser tracker's panel is apart from the card: the card goes once a device has a position (the browser's own
 * first one, say), the panel with its switch stays until it is switched off or the map closes.
 * @param {import('../types/console').PageContext} context
 */
export function firstRun({ me, can, canTrack, opens }) {
  const canConnect = opens('connect');
  // The browser reports as a phone does: a device of the user's own with a key of theirs that writes its points.
  const canTrackBrowser = canConnect && 'geolocation' in navigator;
  const canImport = opens('history') && canTrack('gps:write');
  const waiting = h('p', { class: 'muted', hidden: true });
  const tracker = canTrackBrowser ? trackerPanel(me, can) : null;
  const trackButton = tracker
    ? h('button', { type: 'button', class: 'secondary', onclick: () => tracker.start() }, t('firstRun.track'))
    : null;
  const element = h(
    'section',
    { class: 'connect-card card', 'aria-labelledby': 'connect-title' },
    h('h2', { id: 'connect-title' }, t('map.connectTitle')),
    h('p', {}, t(canConnect ? 'map.connectNext' : 'map.connectNoKeys')),
    waiting,
    h(
      'div',
      { class: 'row first-run-actions' },
      canConnect ? h('a', { class: 'button', href: '#/connect' }, t('map.connectAction')) : null,
      trackButton,
      canImport ? h('a', { class: 'button secondary', href: '#/history/import' }, t('firstRun.import')) : null,
    ),
    tracker ? h('p', { class: 'muted' }, t('firstRun.trackHint')) : null,
  );
  return {
    card: {
      element,
      /** @param {string[]} names the devices without a position yet */
      waiting: (/** @type {string[]} */ names) => {
        waiting.hidden = names.length === 0;
        waiting.textContent = names.length ? t('map.waiting', { names: names.slice(0, 3).join(', ') }) : '';
      },
    },
    tracker: tracker?.element ?? null,
    stop: () => tracker?.stop(),
  };
}

/**
 * The browser tracker's panel: a switch, what it sends and to which device, and what it sent last.
 * @param {import('../types/console').Me} me
 * @param {(permission: string) => boolean} can
 */
function trackerPanel(me, can) {
  const toggle = h('input', { type: 'checkbox', role: 'switch', id: 'browser-tracker-switch' });
  const state = h('p', { role: 'status' }, t('tracker.off'));
  const sends = h('p', { class: 'muted' });
  // What it sends, open where there is room (a phone's short map keeps it folded, one tap away).
  const what = h(
    'details',
    { open: matchMedia('(min-width: 701px)').matches },
    h('summary', {}, t('tracker.what')),
    sends,
  );
  const problem = h('div');
  const password = reauthField();
  const element = h(
    'section',
    { class: 'browser-tracker card', 'aria-labelledby': 'browser-tracker-title', hidden: true },
    h('h2', { id: 'browser-tracker-title' }, t('tracker.title')),
    h('div', { class: 'switch' }, toggle, h('label', { for: toggle.id }, t('tracker.switch'))),
    state,
    problem,
    // Asked for when the session is older than 15 minutes (a new key needs it): Enter switches on again.
    h('form', { onsubmit: (/** @type {Event} */ event) => (event.preventDefault(), start()) }, password.wrapper),
    what,
  );
  /** @type {(() => void) | null} */
  let stopWatch = null;
  let count = 0;

  async function start() {
    element.hidden = false;
    toggle.checked = true;
    show(problem);
    state.textContent = t('tracker.starting');
    try {
      const { browserDevice, watchBrowser } = await import('../browser-tracker.js');
      const { device, key } = await browserDevice({
        userId: me.userId ?? '',
        deviceName: t('tracker.device'),
        scope: can('gps:write') ? 'gps:write' : 'gps:write_own',
        password: password.body,
      });
      password.clear();
      password.wrapper.hidden = true;
      if (!toggle.checked) return;
      sends.textContent = t('tracker.sends', { device: device.name });
      state.textContent = t('tracker.waiting');
      stopWatch = watchBrowser(key, {
        onSent: (point) => {
          count += 1;
          show(problem);
          state.textContent = t('tracker.sent', {
            count: formatNumber(count, 0),
            position: formatPosition(point.latitude, point.longitude),
            accuracy: formatNumber(point.accuracy ?? 0, 0),
          });
        },
        onError: (err) => {
          // Not allowed, or the API refused the point (a revoked key, say): off. No position for a while: it goes on.
          if (err instanceof Error || err.code === err.PERMISSION_DENIED) stop();
          // (A watch that has reported goes on: a browser reports "no position" between fixes now and then.)
          else if (count > 0) return;
          show(problem, errorBox(err instanceof ApiError ? err : t(geolocationText(err))));
          announce(problem.textContent ?? '');
        },
      });
    } catch (err) {
      toggle.checked = false;
      state.textContent = t('tracker.off');
      show(problem, errorBox(password.asked(err) ?? err));
    }
  }

  function stop() {
    stopWatch?.();
    stopWatch = null;
    toggle.checked = false;
    state.textContent = t('tracker.off');
  }

  toggle.addEventListener('change', () => (toggle.checked ? start() : stop()));
  return {
    element,
    start: () => {
      if (!stopWatch) start();
      toggle.focus();
    },
    stop,
  };
}

/**
 * The words for what the Geolocation API refused (1: not allowed, 2: no position, 3: timed out).
 * @param {GeolocationPositionError | Error} err
 */
const geolocationText = (err) =>
  err instanceof Error
    ? 'tracker.failed'
    : err.code === err.PERMISSION_DENIED
      ? 'tracker.denied'
      : 'tracker.unavailable';
