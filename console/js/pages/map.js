// @ts-check
import { all, get } from '../api.js';
import { announce, h, show } from '../dom.js';
import { formatNumber, formatTime, t } from '../i18n.js';
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
 * keyboard way in: each entry centres the map on its device and opens its details.
 * @param {HTMLElement} root
 * @param {import('../types/console').PageContext} context
 */
export async function mount(root, { config }) {
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
  show(root, h('div', { class: 'live' }, aside, mapElement));
  root.classList.add('fill');
  const map = createMap(mapElement, config, t('map.label'));

  const [devices, latest] = await Promise.all([all('/v1/devices'), get('/v1/gps/current/devices')]);
  performance.mark('map-data');
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
    const button = h(
      'button',
      { type: 'button', 'data-device': device.id, disabled: !point, onclick: () => focusDevice(entry) },
      h('span', { class: 'name' }, device.name),
      h('span', { class: 'meta' }, ...meta),
    );
    if (!entry.item) entry.item = h('li');
    show(entry.item, button);
    return entry.item;
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
  }
  /** @param {string} id a device the map does not know yet */
  async function learnDevice(id) {
    try {
      const { data } = await get(`/v1/devices/${id}`);
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
    stopLive();
    clearInterval(staleTimer);
    if (frame) cancelAnimationFrame(frame);
    removeMap(map);
  };
}
