import { all, get } from '../api.js';
import { announce, errorBox, field, h, show } from '../dom.js';
import { formatTime, t } from '../i18n.js';
import { createMap, L, removeMap } from '../map.js';

/**
 * A device's track for a day, drawn as one line on a canvas renderer (tens of thousands of points stay
 * one path, not DOM nodes). The public API lists points newest first with cursor pages
 * (GET /v1/gps, `next` links); the walk stops at the first point older than the day.
 */
export async function mount(root, { config }) {
  const problem = h('div');
  const summary = h('p', { role: 'status' });
  const device = field(t('history.device'), { tag: 'select', name: 'device', required: true });
  const day = field(t('history.day'), { name: 'day', type: 'date', required: true, value: new Date().toISOString().slice(0, 10) });
  const form = h('form', { class: 'row' }, device.wrapper, day.wrapper, h('button', { type: 'submit' }, t('history.show')));
  const mapElement = h('div', { class: 'map' });
  show(root, h('div', { class: 'history' }, h('div', {}, h('h1', { class: 'visually-hidden' }, t('history.title')), form, problem, summary), mapElement));
  const map = createMap(mapElement, config, t('history.title'));
  const renderer = L.canvas({ padding: 0.5 });
  const layer = L.layerGroup().addTo(map);

  try {
    const devices = await all('/v1/devices');
    for (const d of devices.sort((a, b) => a.name.localeCompare(b.name))) device.input.append(h('option', { value: d.id }, d.name));
  } catch (err) {
    show(problem, errorBox(err.message));
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const from = new Date(`${day.input.value}T00:00:00`).getTime();
    const until = from + 86_400_000;
    const points = [];
    show(problem);
    summary.textContent = t('loading');
    try {
      let next = '/v1/gps?limit=100';
      // At most 500 pages (50,000 points, newest first) are read: a day far back on a busy server needs a
      // device-and-time filter in the API, which GET /v1/gps does not have yet.
      for (let pages = 0; next && pages < 500; pages++) {
        const page = await get(next);
        let older = false;
        for (const point of page.data) {
          const at = Date.parse(point.timestamp);
          if (at < from) older = true;
          else if (at < until && point.device_id === device.input.value) points.push(point);
        }
        next = older ? null : page._links?.next ? new URL(page._links.next, location.href).pathname + new URL(page._links.next, location.href).search : null;
      }
    } catch (err) {
      show(problem, errorBox(err.message));
    }
    layer.clearLayers();
    points.reverse();
    if (!points.length) {
      summary.textContent = t('history.empty');
      return;
    }
    const line = L.polyline(points.map((p) => [p.latitude, p.longitude]), { renderer, weight: 4 }).addTo(layer);
    L.circleMarker([points[0].latitude, points[0].longitude], { renderer, radius: 6, color: '#1e7a34' }).bindTooltip(formatTime(points[0].timestamp)).addTo(layer);
    const last = points[points.length - 1];
    L.circleMarker([last.latitude, last.longitude], { renderer, radius: 6, color: '#b3261e' }).bindTooltip(formatTime(last.timestamp)).addTo(layer);
    map.fitBounds(line.getBounds().pad(0.2), { animate: false });
    summary.textContent = `${t('history.points', { count: points.length })}: ${formatTime(points[0].timestamp)} – ${formatTime(last.timestamp)}`;
    announce(summary.textContent);
  });
  return () => removeMap(map);
}
