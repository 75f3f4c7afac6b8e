// @ts-check
import { all } from '../api.js';
import { announce, errorBox, field, h, show } from '../dom.js';
import { formatNumber, formatTime, t } from '../i18n.js';
import { exportButtons, importForm } from '../files.js';
import { createMap, removeMap } from '../map.js';
import { readTrack, showLegend, thinnedFor, TrackLayer } from '../track.js';

/** @param {number} value */
const pad = (value) => String(value).padStart(2, '0');
/** A datetime-local value (the browser's time zone) for a Date. @param {Date} date */
const localValue = (date) =>
  `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;

/**
 * A device's track over a time range: GET /v1/gps/track thinned by the service for the map's size (consecutive
 * points in one pixel left out), read into typed arrays and drawn on one canvas coloured by speed (track.js).
 * Zoomed in past the zoom it was thinned for, the track is read again for the new zoom. The timeline scrubs
 * through the points drawn; the export buttons save every point of the same device and range as GPX, GeoJSON or
 * CSV; a file (GPX, GeoJSON, KML, CSV, Takeout) is imported into the chosen device (with gps:write; with
 * gps:write_own only into a device of one's own, so the form is offered only for those).
 * @param {HTMLElement} root
 * @param {import('../types/console').PageContext} context
 */
export async function mount(root, { config, me, can, canTrack }) {
  const problem = h('div');
  const summary = h('p', { role: 'status', class: 'summary' });
  const device = field(t('history.device'), { tag: 'select', name: 'device', required: true });
  const start = new Date();
  start.setHours(0, 0, 0, 0);
  const from = field(t('history.from'), {
    name: 'from',
    type: 'datetime-local',
    required: true,
    value: localValue(start),
  });
  const to = field(t('history.to'), {
    name: 'to',
    type: 'datetime-local',
    required: true,
    value: localValue(new Date(start.getTime() + 86_399_000)),
  });
  const form = h(
    'form',
    { class: 'row' },
    device.wrapper,
    from.wrapper,
    to.wrapper,
    h('button', { type: 'submit' }, t('history.show')),
  );
  const timeline = field(t('history.timeline'), {
    name: 'timeline',
    type: 'range',
    min: 0,
    max: 0,
    value: 0,
    disabled: true,
  });
  const at = h('output', { for: timeline.input.id, class: 'muted' });
  const legend = h('p', { class: 'legend', hidden: true });
  const fail = (/** @type {unknown} */ err) => show(problem, errorBox(err));
  const exports = h(
    'div',
    { class: 'row exports', role: 'group', 'aria-label': t('history.export') },
    ...exportButtons((format) => `/v1/gps/export?${query(format)}`, fail),
  );
  const imports = canTrack('gps:write')
    ? importForm({ deviceOf: () => device.input.value, onDone: () => form.requestSubmit() })
    : null;
  /** @type {Map<string, string | null>} device id → its owner */
  const ownerOf = new Map();
  const offerImport = () => {
    if (imports) imports.hidden = !can('gps:write') && ownerOf.get(device.input.value) !== me.userId;
  };
  device.input.addEventListener('change', offerImport);
  const mapElement = h('div', { class: 'map' });
  show(
    root,
    h(
      'div',
      { class: 'history' },
      h(
        'div',
        { class: 'controls' },
        h('h1', { class: 'visually-hidden' }, t('history.title')),
        form,
        problem,
        summary,
        h('div', { class: 'row timeline' }, timeline.wrapper, at),
        legend,
        exports,
        imports,
      ),
      mapElement,
    ),
  );
  const map = createMap(mapElement, config, t('history.title'));
  /** @type {TrackLayer | null} */
  let layer = null;
  /** @type {import('../track.js').Track | null} */
  let track = null;

  const range = () => ({ from: new Date(from.input.value).toISOString(), to: new Date(to.input.value).toISOString() });
  /** @param {string} format */
  const query = (format) => new URLSearchParams({ device_id: device.input.value, ...range(), format }).toString();

  try {
    const devices = await all('/v1/devices');
    for (const d of devices.sort((a, b) => a.name.localeCompare(b.name))) {
      device.input.append(h('option', { value: d.id }, d.name));
      ownerOf.set(d.id, d.owner_id);
    }
    offerImport();
    if (location.hash === '#/history/import') openImport();
  } catch (err) {
    show(problem, errorBox(err));
  }

  /** Arrived from the empty map's "Import history": the import form, into a device of the user's own, or why not. */
  function openImport() {
    const own = [...ownerOf].find(([, owner]) => owner === me.userId)?.[0];
    if (imports?.hidden && own) {
      device.input.value = own;
      offerImport();
    }
    if (!imports || imports.hidden) return show(problem, h('p', { role: 'status' }, t('history.importNeedsDevice')));
    imports.scrollIntoView({ block: 'nearest' });
    imports.querySelector('input')?.focus();
  }

  /** @param {number} index */
  function describe(index) {
    if (!track?.n) return '';
    return `${formatTime(new Date(track.time[index]).toISOString())} · ${t('map.speed', { speed: formatNumber(track.speed[index], 1) })}`;
  }

  timeline.input.addEventListener('input', () => {
    const index = Number(timeline.input.value);
    layer?.setCursor(index);
    at.textContent = describe(index);
    timeline.input.setAttribute('aria-valuetext', at.textContent);
  });

  /**
   * Reads the track (for `zoom`, or for the map's size) and draws it; the timeline stays at the same time.
   * @param {number} [zoom]
   */
  async function load(zoom) {
    const atTime =
      track && Number(timeline.input.value) < track.n - 1 ? track.time[Number(timeline.input.value)] : null;
    track = await readTrack(map, { device_id: device.input.value, ...range() }, zoom);
    performance.mark('history-parsed');
    layer?.remove();
    layer = null;
    timeline.input.disabled = !track.n;
    mapElement.dataset.points = String(track.total);
    if (!track.n) {
      showLegend(legend, null);
      at.textContent = '';
      summary.textContent = t('history.empty');
      return announce(summary.textContent);
    }
    layer = new TrackLayer(track);
    if (zoom === undefined) map.fitBounds(layer.bounds().pad(0.1), { animate: false });
    const cursor =
      atTime === null
        ? track.n - 1
        : Math.max(
            0,
            track.time.findIndex((time) => time >= atTime),
          );
    layer.cursor = cursor;
    layer.addTo(map);
    timeline.input.max = String(track.n - 1);
    timeline.input.value = String(cursor);
    at.textContent = describe(cursor);
    timeline.input.setAttribute('aria-valuetext', at.textContent);
    showLegend(legend, layer);
    const count =
      track.n === track.total
        ? t('history.points', { count: formatNumber(track.n, 0) })
        : t('history.pointsDrawn', { count: formatNumber(track.total, 0), drawn: formatNumber(track.n, 0) });
    summary.textContent = `${count}: ${formatTime(new Date(track.time[0]).toISOString())} – ${formatTime(new Date(track.time[track.n - 1]).toISOString())}`;
    mapElement.dataset.drawn = String(track.n);
    performance.mark('history-drawn');
    announce(summary.textContent);
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (!device.input.value) return;
    show(problem);
    summary.textContent = t('loading');
    performance.mark('history-request');
    track = null;
    try {
      await load();
    } catch (err) {
      summary.textContent = '';
      show(problem, errorBox(err));
    }
  });

  // Closer than the track was thinned for: its left-out points may now be pixels apart, so it is read again.
  map.on('zoomend', () => {
    mapElement.dataset.zoom = String(map.getZoom());
    if (thinnedFor(map, track)) load(map.getZoom()).catch(fail);
  });
  return () => removeMap(map);
}
