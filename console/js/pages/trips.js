import { all, patch, post } from '../api.js';
import { exportButtons } from '../files.js';
import { announce, errorBox, field, h, show } from '../dom.js';
import { formatTime, t } from '../i18n.js';
import { createMap, L, removeMap } from '../map.js';

/** The spec's trip state machine: which status each status may move to (PATCH /v1/trips/{id} with status). */
const NEXT = { draft: ['active'], active: ['paused', 'completed'], paused: ['active', 'completed'], completed: [] };

/**
 * Trips with their status, the status changes the state machine allows (only with trips:write), and a
 * trip opened as its track (GET /v1/trips/{id}/gps, drawn on a canvas renderer).
 */
export async function mount(root, { config, can }) {
  const problem = h('div');
  const table = h('tbody');
  const mapElement = h('div', { class: 'map trip-map' });
  const exports = h('div', { class: 'row exports', role: 'group', hidden: true });
  const create = field(t('trips.name'), { name: 'trip-name', maxlength: 200, required: true });
  const createForm = can('trips:write')
    ? h('form', { class: 'row card' }, create.wrapper, h('button', { type: 'submit' }, t('trips.create')))
    : null;
  show(root, h('div', { class: 'page' }, h('h1', {}, t('trips.title')), problem, createForm,
    h('div', { class: 'table-wrap' }, h('table', {}, h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, t('trips.name')), h('th', { scope: 'col' }, t('trips.status')),
      h('th', { scope: 'col' }, t('trips.started')), h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, t('trips.change', { name: '' }))))), table)),
    exports, mapElement));
  const map = createMap(mapElement, config, t('trips.title'));
  const renderer = L.canvas();
  let track;

  async function showTrack(trip) {
    const points = await all(`/v1/trips/${trip.id}/gps`, 100_000);
    showExports(trip);
    track?.remove();
    if (!points.length) return announce(t('history.empty'));
    track = L.polyline(points.map((p) => [p.latitude, p.longitude]), { renderer, weight: 4 }).addTo(map);
    map.fitBounds(track.getBounds().pad(0.2), { animate: false });
    announce(t('history.points', { count: points.length }));
  }

  /** GPX, GeoJSON and CSV of the opened trip (GET /v1/trips/{id}/export). */
  function showExports(trip) {
    exports.hidden = false;
    exports.setAttribute('aria-label', `${t('history.export')}: ${trip.name}`);
    show(exports, h('strong', {}, trip.name), ...exportButtons((format) => `/v1/trips/${trip.id}/export?format=${format}`, (err) => show(problem, errorBox(err.message))));
  }

  function row(trip) {
    const actions = can('trips:write')
      ? NEXT[trip.status].map((status) => h('button', {
        type: 'button', class: 'secondary', 'aria-label': `${t('trips.to', { status: t(`status.${status}`) })}: ${trip.name}`,
        onclick: async () => {
          try {
            const { data } = await patch(`/v1/trips/${trip.id}`, { status });
            show(problem);
            rowOf.get(trip.id).replaceWith(row(data));
            announce(`${data.name}: ${t(`status.${data.status}`)}`);
          } catch (err) {
            show(problem, errorBox(err.message));
          }
        },
      }, t('trips.to', { status: t(`status.${status}`) })))
      : [];
    const tr = h('tr', {},
      h('td', {}, h('button', { type: 'button', class: 'secondary', onclick: () => showTrack(trip).catch((err) => show(problem, errorBox(err.message))) }, trip.name)),
      h('td', {}, t(`status.${trip.status}`)),
      h('td', {}, trip.started_at ? formatTime(trip.started_at) : '–'),
      h('td', {}, h('div', { class: 'row' }, ...actions)));
    rowOf.set(trip.id, tr);
    return tr;
  }
  const rowOf = new Map();

  createForm?.addEventListener('submit', async (event) => {
    event.preventDefault();
    try {
      const { data } = await post('/v1/trips', { name: create.input.value.trim() });
      table.prepend(row(data));
      create.input.value = '';
      show(problem);
    } catch (err) {
      show(problem, errorBox(err.message));
    }
  });

  try {
    const trips = await all('/v1/trips');
    show(table, ...trips.map(row));
    if (!trips.length) show(table, h('tr', {}, h('td', { colspan: 4, class: 'muted' }, t('none'))));
  } catch (err) {
    show(problem, errorBox(err.message));
  }

  return () => removeMap(map);
}
