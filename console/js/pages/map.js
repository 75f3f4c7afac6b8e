// @ts-check
import { allDevices, get } from '../api.js';
import { announce, errorBox, h, show } from '../dom.js';
import { formatNumber, formatPosition, formatSpeed, formatTime, t } from '../i18n.js';
import { incomingShareOf, shareText } from '../shares.js';
import { openLive } from '../live.js';
import { createMap, L, removeMap } from '../map.js';
import { createAccuracy } from '../map/accuracy.js';
import { createClusters } from '../map/clusters.js';
import { createDeviceList } from '../map/list.js';
import { createPositions } from '../map/positions.js';
import { createSelection } from '../map/selection.js';
import { ago, STATUS_TEXT, statusOf } from '../map/status.js';
import { createTrails } from '../map/trails.js';
import { signOut } from '../session.js';
import { firstRun } from './first-run.js';

/** @typedef {import('../types/routes').Schema<'GpsPoint'>} GpsPoint */
/**
 * A device on the map: its latest point and its entry in the list, once there (its marker: map/positions.js).
 * @typedef {{ device: import('../types/routes').Schema<'Device'>, point: GpsPoint | null, item: HTMLLIElement | null }} Entry
 */

/**
 * The live map: every device the user may see at its latest position (GET /v1/map/devices and
 * GET /v1/gps/current/devices once), then moved by the points the WebSocket brings (no polling).
 * Points arriving together are applied once per animation frame. Each map concern is its own module under map/
 * (positions, clusters, selection and follow, trails, accuracy, the list's search, filter and order); this page
 * reads the data and hands each point to them. The list beside the map is the keyboard way in: each entry
 * zooms to its device, opens its details and follows it, says its status (moving, stopped, offline, never
 * reported) with how long ago it reported, its speed and battery, and whose the device is:
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
  const empty = canTrack('devices:write') ? firstRun({ config, me, can, canTrack, opens }) : null;
  let card = empty?.card ?? null;
  show(
    root,
    h('div', { class: 'live' }, aside, h('div', { class: 'map-area' }, mapElement, card?.element, empty?.tracker)),
  );
  root.classList.add('fill');
  const map = createMap(mapElement, config, t('map.label'));

  let loaded;
  try {
    loaded = await Promise.all([
      allDevices(),
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
    empty?.tracker?.remove();
    return () => removeMap(map);
  }
  const [devices, latest] = loaded;
  let incoming = loaded[2];
  performance.mark('map-data');
  let shareOf = incomingShareOf(incoming);
  /** @type {Map<string, Entry>} device id → its entry */
  const entries = new Map(devices.map((device) => [device.id, { device, point: null, item: null }]));
  const staleAfterMs = config.staleAfterSecs * 1000;
  /** @param {Entry} entry */
  const status = (entry) => statusOf(entry.point, staleAfterMs);

  const clusters = createClusters(map);
  const positions = createPositions(clusters, {
    popup: (id) => {
      const entry = entries.get(id);
      return entry?.point ? details({ ...entry, point: entry.point }) : h('div');
    },
    onClick: (id) => selection.select(id),
  });
  const selection = createSelection(map, (id) => {
    const entry = entries.get(id);
    const marker = positions.marker(id);
    if (!entry || !marker) return null;
    return { name: entry.device.name, latLng: () => marker.getLatLng(), open: () => openDetails(marker) };
  });
  mapElement.after(selection.bar);
  const trails = createTrails(map);
  const accuracy = createAccuracy(map, () => entries.values());
  const deviceList = createDeviceList({
    list,
    entries: () => entries.values(),
    statusOf: status,
    renderEntry: renderItem,
  });
  aside.insertBefore(deviceList.controls, list);
  aside.insertBefore(deviceList.count, list);

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
      statusText(status(entry), point),
      h('br'),
      formatSpeed(point.speed_kmh ?? 0, 1),
      point.battery_level !== null ? [' · ', t('map.battery', { level: formatNumber(point.battery_level, 0) })] : null,
      point.accuracy !== null ? [' · ', t('map.accuracy', { metres: formatNumber(point.accuracy, 0) })] : null,
      h('br'),
      formatPosition(point.latitude, point.longitude),
      changeable(device) ? h('div', { class: 'popup-actions' }, editButton(entries.get(device.id) ?? entry)) : null,
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
    const now = status(entry);
    const meta = point
      ? [
          h('span', { class: `status is-${now}` }, statusText(now, point)),
          now === 'moving' ? [' · ', formatSpeed(point.speed_kmh ?? 0)] : null,
          point.battery_level !== null
            ? [' · ', t('map.battery', { level: formatNumber(point.battery_level, 0) })]
            : null,
        ]
      : [h('span', { class: 'status is-never' }, t('map.never'))];
    const mark = whose(device);
    const button = h(
      'button',
      { type: 'button', 'data-device': device.id, disabled: !point, onclick: () => selection.select(device.id) },
      h('span', { class: 'name' }, device.name, device.is_active ? null : ` (${t('device.inactive')})`),
      h('span', { class: 'meta' }, ...meta),
      mark ? h('span', { class: 'whose' }, mark) : null,
    );
    if (!entry.item) entry.item = h('li');
    show(entry.item, button, changeable(device) ? editButton(entry) : null, mine(device) ? shareButton(device) : null);
    return entry.item;
  }

  /** Whether the user may change the device (rename, colour, key, delete): their own, or any with devices:write. */
  const changeable = (/** @type {Entry['device']} */ device) => can('devices:write') || mine(device);

  /** The button that opens the device's dialog (its module loaded when first wanted). @param {Entry} entry */
  function editButton(entry) {
    const label = t('device.editLabel', { name: entry.device.name });
    const button = h('button', { type: 'button', class: 'edit', 'aria-label': label }, t('device.edit'));
    button.addEventListener('click', async () => {
      const { openDeviceDialog } = await import('./device-dialog.js');
      openDeviceDialog(entry.device, {
        me,
        can,
        publicUrl: config.publicUrl,
        // The list may have drawn the entry anew meanwhile: its button then.
        opener: () => (button.isConnected ? button : entry.item?.querySelector('button.edit')),
        onChanged: (device) => {
          // A new name or look: the marker is made anew (its title, label, colour and icon show them).
          const { name, icon, color } = entry.device;
          if (device.name !== name || device.icon !== icon || device.color !== color) positions.remove(device.id);
          entry.device = device;
          place(entry);
          deviceList.render();
        },
        onDeleted: (id) => {
          positions.remove(id);
          entries.delete(id);
          deviceList.render();
          updateCard();
        },
      });
    });
    return button;
  }

  /**
   * The status in words with how long ago the device reported: "moving · 2 min ago", "offline since 3 days ago".
   * @param {import('../map/status.js').Status} now
   * @param {GpsPoint} point
   */
  function statusText(now, point) {
    const when = h('time', { datetime: point.timestamp, title: formatTime(point.timestamp) }, ago(point.timestamp));
    return now === 'offline' ? [t('map.offlineSince'), ' ', when] : [t(STATUS_TEXT[now]), ' · ', when];
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

  /**
   * Puts the device's marker at its point, with what follows a point: the trail, the accuracy circle, the map when
   * the device is followed.
   * @param {Entry} entry
   * @param {boolean} [live] whether the point came live (a trail grows only from those)
   */
  function place(entry, live = false) {
    const { device, point } = entry;
    if (!point) return;
    positions.place(device, point, status(entry));
    if (live) trails.add(device, point, positions.alone(device.id));
    accuracy.moved(device, point);
    selection.moved(device.id);
  }

  /**
   * Opens a marker's details once it is on the map (out of its cluster).
   * @param {L.Marker} marker
   */
  function openDetails(marker) {
    marker.openPopup();
    marker.getElement()?.focus({ preventScroll: true });
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
  positions.begin();
  for (const entry of entries.values()) place(entry);
  positions.end();
  deviceList.render();
  updateCard();
  performance.mark('map-placed');

  // A list in the order of last seen, or filtered by status, is listed again at most once a second while points come.
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let relistTimer;
  function relist() {
    relistTimer ??= setTimeout(() => {
      relistTimer = undefined;
      deviceList.render();
    }, 1000);
  }

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
      place(entry, true);
      // Only rows in the page are drawn again: the list renders the others when they scroll into view.
      if (!deviceList.reorders() && entry.item?.isConnected) renderItem(entry);
    }
    pending.clear();
    if (deviceList.reorders()) relist();
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
      if (!entries.has(id)) entries.set(id, { device: data, point: null, item: null });
      deviceList.render();
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
  // Statuses and "2 min ago" are a matter of the clock, not of new data: nothing is fetched. The times are rewritten
  // in place, and only the devices whose status changed since (went offline, stopped) are drawn again (a thousand
  // re-rendered list items would stall the page).
  const clockTimer = setInterval(() => {
    for (const entry of entries.values()) {
      if (!entry.point) continue;
      const time = entry.item?.querySelector('.status time');
      if (time) time.textContent = ago(entry.point.timestamp);
      if (entry.item?.querySelector(`.status.is-${status(entry)}`)) continue;
      place(entry);
      if (entry.item?.isConnected) renderItem(entry);
    }
  }, 30_000);

  return () => {
    // A sharing dialog still open belongs to this page.
    document.querySelector('dialog.share-dialog')?.remove();
    document.querySelector('dialog.device-dialog')?.remove();
    stopLive();
    empty?.stop();
    clearInterval(clockTimer);
    clearTimeout(relistTimer);
    trails.stop();
    accuracy.stop();
    deviceList.stop();
    if (frame) cancelAnimationFrame(frame);
    removeMap(map);
  };
}
