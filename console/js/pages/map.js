// @ts-check
import { all, get } from '../api.js';
import { announce, errorBox, h, show } from '../dom.js';
import { formatNumber, formatTime, t } from '../i18n.js';
import { incomingShareOf, shareText } from '../shares.js';
import { openLive } from '../live.js';
import { createMap, L, removeMap } from '../map.js';
import { signOut } from '../session.js';

/** @typedef {import('../types/routes').Schema<'GpsPoint'>} GpsPoint */
/**
 * A device on the map: its latest point, its marker and its entry in the list, once there.
 * @typedef {{ device: import('../types/routes').Schema<'Device'>, point: GpsPoint | null, marker: L.Marker | null, item: HTMLLIElement | null }} Entry
 */

/**
 * The live map: every device the user may see at its latest position (GET /v1/devices and
 * GET /v1/gps/current/devices once), then moved by the points the WebSocket brings (no polling).
 * Points arriving together are applied once per animation frame. The list beside the map is the
 * keyboard way in: each entry centres the map on its device and opens its details, and says whose the device is:
 * the user's own (with a Share button opening the sharing dialog), or shared with them by whom, at what level and
 * until when (GET /v1/shares?direction=incoming). While no device has a position, a card over the map asks the user
 * to connect their phone.
 * @param {HTMLElement} root
 * @param {import('../types/console').PageContext} context
 */
export async function mount(root, { config, me, can, canTrack, opens }) {
  const list = h('ul');
  const liveState = h('p', { class: 'meta muted', role: 'status' });
  const aside = h(
    'section',
    { class: 'devices', 'aria-labelledby': 'devices-title' },
    h('h1', { id: 'devices-title' }, t('map.devices')),
    liveState,
    list,
  );
  const mapElement = h('div', { class: 'map', id: 'map' });
  let card = canTrack('devices:write') ? connectCard(opens('connect')) : null;
  show(root, h('div', { class: 'live' }, aside, h('div', { class: 'map-area' }, mapElement, card?.element)));
  root.classList.add('fill');
  const map = createMap(mapElement, config, t('map.label'));

  let loaded;
  try {
    loaded = await Promise.all([
      all('/v1/devices'),
      get('/v1/gps/current/devices'),
      // The marks only: a map without them is still a map.
      get('/v1/shares?direction=incoming').then(
        ({ data }) => data,
        () => [],
      ),
    ]);
  } catch (err) {
    // (Self-service tracking switched off on this instance, say: the API's words.)
    show(list, h('li', {}, errorBox(err)));
    card?.element.remove();
    return () => removeMap(map);
  }
  const [devices, latest] = loaded;
  let incoming = loaded[2];
  performance.mark('map-data');
  let shareOf = incomingShareOf(incoming);
  /** @type {Map<string, Entry>} device id → its entry */
  const entries = new Map(devices.map((device) => [device.id, { device, point: null, marker: null, item: null }]));
  const staleAfterMs = config.staleAfterSecs * 1000;
  /** @param {GpsPoint} point */
  const isStale = (point) => Date.now() - Date.parse(point.timestamp) > staleAfterMs;

  /**
   * A located device's popup.
   * @param {Entry & { point: GpsPoint }} entry
   */
  function details(entry) {
    const { device, point } = entry;
    return h(
      'div',
      {},
      h('strong', {}, device.name),
      h('br'),
      formatTime(point.timestamp),
      h('br'),
      t('map.speed', { speed: formatNumber(point.speed_kmh ?? 0, 1) }),
      h('br'),
      t('map.position', { lat: formatNumber(point.latitude), lon: formatNumber(point.longitude) }),
    );
  }

  /**
   * Whose the device is, in words: the user's own, or shared with them by whom, how and until when.
   * @param {Entry['device']} device
   */
  function whose(device) {
    if (me.userId && device.owner_id === me.userId) return t('map.yours');
    const share = shareOf(device);
    return share ? t('map.sharedBy', { owner: share.owner_username ?? '?', share: shareText(share) }) : null;
  }

  /** @param {Entry} entry */
  function renderItem(entry) {
    const { device, point } = entry;
    const stale = point && isStale(point);
    const meta = point
      ? [
          t('map.position', { lat: formatNumber(point.latitude), lon: formatNumber(point.longitude) }),
          ' · ',
          h('time', { datetime: point.timestamp }, formatTime(point.timestamp)),
          stale ? [' · ', h('span', { class: 'stale' }, t('map.stale'))] : null,
        ]
      : [t('map.noDevices')];
    const mark = whose(device);
    const button = h(
      'button',
      { type: 'button', 'data-device': device.id, disabled: !point, onclick: () => focusDevice(entry) },
      h('span', { class: 'name' }, device.name),
      h('span', { class: 'meta' }, ...meta),
      mark ? h('span', { class: 'whose' }, mark) : null,
    );
    if (!entry.item) entry.item = h('li');
    show(entry.item, button, mine(device) ? shareButton(device) : null);
    return entry.item;
  }

  /** Whether the user may share the device: their own, with devices:write or its own-scope twin. @param {Entry['device']} device */
  const mine = (device) => Boolean(me.userId) && device.owner_id === me.userId && canTrack('devices:write');

  /** @param {Entry['device']} device */
  function shareButton(device) {
    const button = h(
      'button',
      { type: 'button', class: 'share', 'aria-label': t('map.shareLabel', { name: device.name }) },
      t('map.share'),
    );
    // The dialog's module is loaded when first wanted, not with the map.
    button.addEventListener('click', async () => {
      const { openShareDialog } = await import('./share-dialog.js');
      openShareDialog(device, { groups: can('groups:read'), opener: button });
    });
    return button;
  }

  /** The connect card goes once a device has a position; until then it names the devices still silent. */
  function updateCard() {
    if (!card) return;
    const known = [...entries.values()];
    if (!known.some((entry) => entry.point)) return card.waiting(known.map((entry) => entry.device.name));
    card.element.remove();
    card = null;
  }

  /** @param {Entry} entry */
  function place(entry) {
    const { device, point } = entry;
    if (!point) return;
    const located = { ...entry, point };
    /** @type {L.LatLngTuple} */
    const position = [point.latitude, point.longitude];
    if (!entry.marker) {
      const icon = L.divIcon({ className: 'device-marker', iconSize: [18, 18] });
      entry.marker = L.marker(position, { icon, keyboard: true, title: device.name, alt: device.name }).addTo(map);
      entry.marker.bindPopup(() => details({ ...entry, point: entry.point ?? point }));
    } else {
      entry.marker.setLatLng(position);
      if (entry.marker.isPopupOpen()) entry.marker.setPopupContent(details(located));
    }
    const element = entry.marker.getElement();
    if (!element) return;
    element.setAttribute('aria-label', device.name);
    element.dataset.device = device.id;
    element.dataset.latitude = String(point.latitude);
    element.dataset.longitude = String(point.longitude);
    element.classList.toggle('is-stale', isStale(point));
  }

  /** @param {Entry} entry */
  function focusDevice(entry) {
    if (!entry.marker) return;
    map.setView(entry.marker.getLatLng(), Math.max(map.getZoom(), 14));
    entry.marker.openPopup();
    entry.marker.getElement()?.focus({ preventScroll: true });
  }

  function renderList() {
    const sorted = [...entries.values()].sort((a, b) => a.device.name.localeCompare(b.device.name));
    show(list, ...sorted.map(renderItem));
    if (sorted.length === 0) show(list, h('li', { class: 'muted' }, t('map.noDevices')));
  }

  for (const point of latest) {
    const entry = point.device_id && entries.get(point.device_id);
    if (entry) entry.point = point;
  }
  // The view first, then the markers: fitted afterwards, every marker would be positioned twice.
  const located = [...entries.values()].flatMap(({ point }) => (point ? [point] : []));
  if (located.length)
    map.fitBounds(L.latLngBounds(located.map((point) => L.latLng(point.latitude, point.longitude))).pad(0.3), {
      maxZoom: 14,
      animate: false,
    });
  for (const entry of entries.values()) place(entry);
  renderList();
  updateCard();
  performance.mark('map-placed');

  // Live updates, one render per frame however many points arrive in it.
  /** @type {Map<string, GpsPoint>} device id → its newest point not yet shown */
  const pending = new Map();
  let frame = 0;
  function apply() {
    frame = 0;
    for (const point of pending.values()) {
      const entry = point.device_id ? entries.get(point.device_id) : undefined;
      if (!entry || (entry.point && Date.parse(entry.point.timestamp) > Date.parse(point.timestamp))) continue;
      entry.point = point;
      place(entry);
      renderItem(entry);
    }
    pending.clear();
    updateCard();
  }
  /** @param {string} id a device the map does not know yet (new, or just shared with the user) */
  async function learnDevice(id) {
    try {
      const [{ data }, shares] = await Promise.all([
        get(`/v1/devices/${id}`),
        get('/v1/shares?direction=incoming').catch(() => ({ data: incoming })),
      ]);
      incoming = shares.data;
      shareOf = incomingShareOf(incoming);
      if (!entries.has(id)) entries.set(id, { device: data, point: null, marker: null, item: null });
      renderList();
      apply();
    } catch {
      // A device the user may not read stays off the map.
    }
  }
  const stopLive = openLive({
    onPoint: (point) => {
      if (!point.device_id) return;
      pending.set(point.device_id, point);
      if (!entries.has(point.device_id)) return learnDevice(point.device_id);
      if (!frame) frame = requestAnimationFrame(apply);
    },
    onState: (state) => {
      liveState.textContent = t(state === 'live' ? 'map.live' : 'map.offline');
      if (state !== 'live') announce(t('map.offline'));
    },
    onSignedOut: () => signOut(false),
  });
  // Staleness is a matter of the clock, not of new data: re-marked locally, nothing is fetched; only the
  // devices that turned stale since are drawn again (a thousand re-rendered list items would stall the page).
  const staleTimer = setInterval(() => {
    for (const entry of entries.values()) {
      if (!entry.point || entry.item?.querySelector('.stale') || !isStale(entry.point)) continue;
      place(entry);
      renderItem(entry);
    }
  }, 30_000);

  return () => {
    // A sharing dialog still open belongs to this page.
    document.querySelector('dialog.share-dialog')?.remove();
    stopLive();
    clearInterval(staleTimer);
    if (frame) cancelAnimationFrame(frame);
    removeMap(map);
  };
}

/**
 * The card over the empty map: connect your phone (Connect a device), and what happens then. A user who may not make
 * the API key a phone sends with is told so instead of being sent to a page they cannot use.
 * @param {boolean} canConnect whether the user may open Connect a device
 */
function connectCard(canConnect) {
  const waiting = h('p', { class: 'muted', hidden: true });
  const element = h(
    'section',
    { class: 'connect-card card', 'aria-labelledby': 'connect-title' },
    h('h2', { id: 'connect-title' }, t('map.connectTitle')),
    h('p', {}, t(canConnect ? 'map.connectNext' : 'map.connectNoKeys')),
    waiting,
    canConnect ? h('a', { class: 'button', href: '#/connect' }, t('map.connectAction')) : null,
  );
  return {
    element,
    /** @param {string[]} names the devices without a position yet */
    waiting: (names) => {
      waiting.hidden = names.length === 0;
      waiting.textContent = names.length ? t('map.waiting', { names: names.slice(0, 3).join(', ') }) : '';
    },
  };
}
