// @ts-check
import { allDevices } from '../api.js';
import { announce, errorBox, field, h, show } from '../dom.js';
import { formatNumber, formatSpeed, formatTime, t } from '../i18n.js';
import { exportButtons, importForm } from '../files.js';
import { pastImports } from '../imports.js';
import { createMap, removeMap } from '../map.js';
import { rangeFields } from '../range.js';
import { readTrack, showLegend, thinnedFor, TrackLayer } from '../track.js';

/** @typedef {import('../types/routes').Schema<'Device'>} Device */
/** @typedef {import('../types/routes').Schema<'GpsImport'>} GpsImport */

/**
 * A device's track over a time range: GET /v1/gps/track thinned by the service for the map's size (consecutive
 * points in one pixel left out), read into typed arrays and drawn on one canvas coloured by speed (track.js).
 * Zoomed in past the zoom it was thinned for, the track is read again for the new zoom. The range has presets
 * and previous/next day (range.js). The timeline scrubs through the points drawn; the export buttons save every
 * point of the same device and range as GPX, GeoJSON or CSV; a file (GPX, GeoJSON, KML, CSV, Takeout) is imported
 * into a device the user may write to (with gps:write any; with gps:write_own one of their own, or a new one made
 * for it), after which the page shows that device over the days the import covers, its report beside; the past
 * imports are listed with their reports, each to be shown again or its points removed (imports.js).
 * @param {HTMLElement} root
 * @param {import('../types/console').PageContext} context
 */
export async function mount(root, { config, me, can, canTrack }) {
  const problem = h('div');
  const summary = h('p', { role: 'status', class: 'summary' });
  const device = field(t('history.device'), { tag: 'select', name: 'device', required: true });
  const dates = rangeFields(() => showRange());
  const form = h(
    'form',
    { class: 'row' },
    device.wrapper,
    dates.from.wrapper,
    dates.to.wrapper,
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
  /** @type {Map<string, Device>} */
  const devices = new Map();
  /** The devices the user may import into: any with gps:write, else their own (the API refuses others). */
  const writable = () => [...devices.values()].filter((d) => can('gps:write') || d.owner_id === me.userId);
  const imports = canTrack('gps:write')
    ? importForm({
        canCreate: canTrack('devices:write'),
        onDevice: (made) => {
          devices.set(made.id, made);
          device.input.append(h('option', { value: made.id }, made.name));
        },
        onDone: (done) => {
          past?.add(done);
          return showImport(done);
        },
      })
    : null;
  const past = imports
    ? pastImports({
        deviceName: (id) => devices.get(id)?.name ?? t('imports.unknownDevice'),
        canRemove: (item) =>
          can('gps:delete') || (can('gps:delete_own') && devices.get(item.device_id)?.owner_id === me.userId),
        onShow: showImport,
        onRemoved: (item) => {
          if (item.device_id === device.input.value && track) showRange();
        },
      })
    : null;
  device.input.addEventListener('change', () => imports?.choose(device.input.value));
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
        dates.presets,
        problem,
        summary,
        h('div', { class: 'row timeline' }, timeline.wrapper, at),
        legend,
        exports,
        imports?.element,
        past?.element,
      ),
      mapElement,
    ),
  );
  const map = createMap(mapElement, config, t('history.title'));
  /** @type {TrackLayer | null} */
  let layer = null;
  /** @type {import('../track.js').Track | null} */
  let track = null;

  /** @param {string} format */
  const query = (format) => new URLSearchParams({ device_id: device.input.value, ...dates.range(), format }).toString();

  try {
    for (const d of (await allDevices()).sort((a, b) => a.name.localeCompare(b.name))) {
      device.input.append(h('option', { value: d.id }, d.name));
      devices.set(d.id, d);
    }
    imports?.setDevices(writable(), device.input.value);
    await past?.load();
    if (location.hash === '#/history/import') imports?.open();
  } catch (err) {
    show(problem, errorBox(err));
  }

  /**
   * Shows an import's device over the whole days its points span (its report is then scrolled into view, below
   * the import form or among the past imports).
   * @param {GpsImport} item
   */
  async function showImport(item) {
    if (!item.first_point_at || !item.last_point_at || !devices.has(item.device_id)) return;
    device.input.value = item.device_id;
    dates.showDays(new Date(item.first_point_at), new Date(item.last_point_at));
    await showRange();
  }

  /** @param {number} index */
  function describe(index) {
    if (!track?.n) return '';
    return `${formatTime(new Date(track.time[index]).toISOString())} · ${formatSpeed(track.speed[index] ?? 0, 1)}`;
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
    track = await readTrack(map, { device_id: device.input.value, ...dates.range() }, zoom);
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
    // The legend and the summary may have changed the controls' height, so the map's size is read again first.
    if (zoom === undefined)
      map.invalidateSize({ animate: false }).fitBounds(layer.bounds().pad(0.1), { animate: false });
    mapElement.dataset.drawn = String(track.n);
    performance.mark('history-drawn');
    announce(summary.textContent);
  }

  /** Reads and draws the chosen device over the chosen range; what went wrong is shown instead. */
  async function showRange() {
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
  }
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    showRange();
  });

  // Closer than the track was thinned for: its left-out points may now be pixels apart, so it is read again.
  map.on('zoomend', () => {
    mapElement.dataset.zoom = String(map.getZoom());
    if (thinnedFor(map, track)) load(map.getZoom()).catch(fail);
  });
  return () => removeMap(map);
}
