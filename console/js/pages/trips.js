// @ts-check
import { all, allDevices, get, patch, post } from '../api.js';
import { exportButtons } from '../files.js';
import { announce, errorBox, field, h, show } from '../dom.js';
import { formatNumber, formatTime, t } from '../i18n.js';
import { createMap, removeMap } from '../map.js';
import { readTrack, showLegend, thinnedFor, TrackLayer } from '../track.js';

/** @typedef {import('../types/routes').Schema<'Trip'>} Trip */
/** @typedef {import('../types/routes').Schema<'Device'>} Device */

/**
 * The spec's trip state machine: which status each status may move to (PATCH /v1/trips/{id} with status).
 * @type {Record<Trip['status'], Trip['status'][]>}
 */
const NEXT = { draft: ['active'], active: ['paused', 'completed'], paused: ['active', 'completed'], completed: [] };

/**
 * Trips with their device and status, a form that creates one with its device (whose points then become the
 * trip's while it is active: gps_logging_enabled), category, origin and destination (each offered when the user may
 * read those lists), the status changes the state machine allows (only with trips:write), and a trip
 * opened as its track, drawn as History draws one (track.js): GET /v1/gps/track of the device of the trip's
 * first point, from that point's time to its last point's (GET /v1/trips/{id}/gps, one point a page), thinned
 * for the map and read again when zoomed in past that. Points the device sent while the trip was paused lie in
 * that range too and are drawn with it. (With trips:write_own the API changes only the user's own trips and says so
 * for others, trip.not_owner.)
 * @param {HTMLElement} root
 * @param {import('../types/console').PageContext} context
 */
export async function mount(root, { config, me, can, canTrack }) {
  const problem = h('div');
  const table = h('tbody');
  const mapElement = h('div', { class: 'map trip-map' });
  const exports = h('div', { class: 'row exports', role: 'group', hidden: true });
  const legend = h('p', { class: 'legend', hidden: true });
  const create = field(t('trips.name'), { name: 'trip-name', maxlength: 200, required: true });
  const device = field(t('trips.device'), { tag: 'select', name: 'trip-device' });
  const deviceHint = h('p', { class: 'muted', id: `${device.input.id}-hint` }, t('trips.deviceHint'));
  device.input.setAttribute('aria-describedby', deviceHint.id);
  const category = field(t('trips.category'), { tag: 'select', name: 'trip-category' });
  const origin = field(t('trips.origin'), { tag: 'select', name: 'trip-origin' });
  const destination = field(t('trips.destination'), { tag: 'select', name: 'trip-destination' });
  const createForm = canTrack('trips:write')
    ? h(
        'form',
        { class: 'card trip-form' },
        h('div', { class: 'row' }, create.wrapper, device.wrapper),
        deviceHint,
        can('trip_categories:read') || can('locations:read')
          ? h(
              'div',
              { class: 'row' },
              can('trip_categories:read') ? category.wrapper : null,
              can('locations:read') ? origin.wrapper : null,
              can('locations:read') ? destination.wrapper : null,
            )
          : null,
        h('button', { type: 'submit' }, t('trips.create')),
      )
    : null;
  /** @type {Map<string, string>} device id → its name, for the table */
  const deviceNames = new Map();
  show(
    root,
    h(
      'div',
      { class: 'page' },
      h('h1', {}, t('trips.title')),
      problem,
      createForm,
      h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          {},
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              h('th', { scope: 'col' }, t('trips.name')),
              h('th', { scope: 'col' }, t('trips.device')),
              h('th', { scope: 'col' }, t('trips.status')),
              h('th', { scope: 'col' }, t('trips.started')),
              h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, t('trips.change', { name: '' }))),
            ),
          ),
          table,
        ),
      ),
      exports,
      legend,
      mapElement,
    ),
  );
  const map = createMap(mapElement, config, t('trips.title'));
  const fail = (/** @type {unknown} */ err) => show(problem, errorBox(err));
  /** @type {TrackLayer | null} */
  let layer = null;
  /** @type {import('../track.js').Track | null} */
  let track = null;
  /** @type {{ device_id: string, from: string, to: string }} */
  let query;
  let opened = 0;

  /**
   * The device and time range of a trip's points: its first point's device, from the first point's time to the last's.
   * @param {Trip} trip
   */
  async function rangeOf(trip) {
    /** @param {number} page */
    const pageOf = (page) => get(`/v1/trips/${trip.id}/gps?page=${page}&limit=1`);
    const first = await pageOf(1);
    const total = first.pagination.total;
    const [start] = first.data;
    if (!start?.device_id) return null;
    const end = total > 1 ? ((await pageOf(total)).data[0] ?? start) : start;
    return { device_id: start.device_id, from: start.timestamp, to: end.timestamp };
  }

  /**
   * Reads the opened trip's track (for the map's size, or for `zoom`) and draws it.
   * @param {number} [zoom]
   */
  async function load(zoom) {
    const mine = opened;
    const read = await readTrack(map, query, zoom);
    if (mine !== opened) return;
    track = read;
    layer?.remove();
    layer = null;
    mapElement.dataset.points = String(track.total);
    mapElement.dataset.drawn = String(track.n);
    if (!track.n) {
      showLegend(legend, null);
      return announce(t('history.empty'));
    }
    layer = new TrackLayer(track);
    if (zoom === undefined) map.fitBounds(layer.bounds().pad(0.2), { animate: false });
    layer.addTo(map);
    showLegend(legend, layer);
    if (zoom === undefined) announce(t('history.points', { count: formatNumber(track.total, 0) }));
  }

  /** @param {Trip} trip */
  async function showTrack(trip) {
    const mine = ++opened;
    showExports(trip);
    layer?.remove();
    layer = null;
    track = null;
    showLegend(legend, null);
    const range = await rangeOf(trip);
    if (mine !== opened) return;
    mapElement.dataset.trip = trip.id;
    if (!range) {
      mapElement.dataset.points = '0';
      return announce(t('trips.empty'));
    }
    query = range;
    await load();
  }

  map.on('zoomend', () => {
    if (thinnedFor(map, track)) load(map.getZoom()).catch(fail);
  });

  /**
   * GPX, GeoJSON and CSV of the opened trip (GET /v1/trips/{id}/export).
   * @param {Trip} trip
   */
  function showExports(trip) {
    exports.hidden = false;
    exports.setAttribute('aria-label', `${t('history.export')}: ${trip.name}`);
    show(
      exports,
      h('strong', {}, trip.name),
      ...exportButtons((format) => `/v1/trips/${trip.id}/export?format=${format}`, fail),
    );
  }

  /**
   * @param {Trip} trip
   * @returns {HTMLTableRowElement}
   */
  function row(trip) {
    const actions = canTrack('trips:write')
      ? NEXT[trip.status].map((status) =>
          h(
            'button',
            {
              type: 'button',
              class: 'secondary',
              'aria-label': `${t('trips.to', { status: t(`status.${status}`) })}: ${trip.name}`,
              onclick: async () => {
                try {
                  const { data } = await patch(`/v1/trips/${trip.id}`, { status });
                  show(problem);
                  rowOf.get(trip.id)?.replaceWith(row(data));
                  announce(`${data.name}: ${t(`status.${data.status}`)}`);
                } catch (err) {
                  show(problem, errorBox(err));
                }
              },
            },
            t('trips.to', { status: t(`status.${status}`) }),
          ),
        )
      : [];
    const tr = h(
      'tr',
      {},
      h(
        'td',
        {},
        h('button', { type: 'button', class: 'secondary', onclick: () => showTrack(trip).catch(fail) }, trip.name),
      ),
      h('td', {}, trip.device_id ? (deviceNames.get(trip.device_id) ?? '–') : '–'),
      h('td', {}, t(`status.${trip.status}`)),
      h('td', {}, trip.started_at ? formatTime(trip.started_at) : '–'),
      h('td', {}, h('div', { class: 'row' }, ...actions)),
    );
    rowOf.set(trip.id, tr);
    return tr;
  }
  /** @type {Map<string, HTMLTableRowElement>} */
  const rowOf = new Map();

  /** Fills a select with `items` after a "none" choice. @param {HTMLSelectElement} select @param {{ id: string, name: string }[]} items */
  const choices = (select, items) =>
    show(
      select,
      h('option', { value: '' }, t('trips.noChoice')),
      ...items.map((item) => h('option', { value: item.id }, item.name)),
    );
  /** @param {HTMLSelectElement} select */
  const chosen = (select) => select.value || undefined;

  createForm?.addEventListener('submit', async (event) => {
    event.preventDefault();
    const deviceId = chosen(device.input);
    try {
      const { data } = await post('/v1/trips', {
        name: create.input.value.trim(),
        // A trip with a device records what it sends while active; one without has nothing to record.
        ...(deviceId ? { device_id: deviceId, gps_logging_enabled: true } : {}),
        category_id: chosen(category.input),
        origin_id: chosen(origin.input),
        destination_id: chosen(destination.input),
      });
      if (!rowOf.size) show(table);
      table.prepend(row(data));
      create.input.value = '';
      show(problem);
      announce(t('trips.created', { name: data.name }));
    } catch (err) {
      show(problem, errorBox(err));
    }
  });

  /** @type {import('../types/routes').Schema<'TripCategory'>[]} */
  const noCategories = [];
  /** @type {import('../types/routes').Schema<'Location'>[]} */
  const noLocations = [];
  try {
    const [trips, devices, categories, locations] = await Promise.all([
      all('/v1/trips'),
      allDevices(),
      can('trip_categories:read') ? get('/v1/trip-categories') : noCategories,
      can('locations:read') ? all('/v1/locations') : noLocations,
    ]);
    for (const d of devices) deviceNames.set(d.id, d.name);
    // A trip logs only to a device its maker owns, unless they hold trips:write (the API says the same).
    const loggable = devices
      .filter((d) => can('trips:write') || d.owner_id === me.userId)
      .sort((a, b) => a.name.localeCompare(b.name));
    choices(device.input, loggable);
    device.input.value = loggable[0]?.id ?? '';
    choices(
      category.input,
      categories.filter((c) => c.is_active),
    );
    const active = locations.filter((l) => l.is_active);
    choices(origin.input, active);
    choices(destination.input, active);
    show(table, ...trips.map(row));
    if (!trips.length) show(table, h('tr', {}, h('td', { colspan: 5, class: 'muted' }, t('none'))));
  } catch (err) {
    show(problem, errorBox(err));
  }

  return () => removeMap(map);
}
