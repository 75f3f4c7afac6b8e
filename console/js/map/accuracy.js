// @ts-check
import { L } from '../map.js';
import { colourOf } from './icons.js';

/**
 * How far off a position may be: a circle of the point's `accuracy` (metres) around each device in view, once the
 * map is zoomed in far enough for a few metres to show (zoom 15, where a city block fills the screen). At most
 * MAX circles, all on one canvas, drawn again when the view or a shown device's point changes.
 * @typedef {import('../types/routes').Schema<'GpsPoint'>} GpsPoint
 * @typedef {import('../types/routes').Schema<'Device'>} Device
 */

export const ACCURACY_ZOOM = 15;
const MAX = 300;

/**
 * @param {L.Map} map
 * @param {() => Iterable<{ device: Device, point: GpsPoint | null }>} devices
 */
export function createAccuracy(map, devices) {
  const renderer = L.canvas({ padding: 0.2 });
  const group = L.layerGroup().addTo(map);
  /** @type {Map<string, L.Circle>} */
  const circles = new Map();

  /** @param {Device} device @param {GpsPoint} point */
  function circle(device, point) {
    const latLng = L.latLng(point.latitude, point.longitude);
    const existing = circles.get(device.id);
    if (existing) return existing.setLatLng(latLng).setRadius(point.accuracy ?? 0);
    const colour = colourOf(device);
    const made = L.circle(latLng, {
      renderer,
      radius: point.accuracy ?? 0,
      color: colour,
      weight: 1,
      fillColor: colour,
      fillOpacity: 0.12,
      interactive: false,
    });
    circles.set(device.id, made);
    group.addLayer(made);
    return made;
  }

  function redraw() {
    group.clearLayers();
    circles.clear();
    if (map.getZoom() < ACCURACY_ZOOM) return;
    const bounds = map.getBounds();
    for (const { device, point } of devices()) {
      if (circles.size >= MAX) break;
      if (point?.accuracy && bounds.contains([point.latitude, point.longitude])) circle(device, point);
    }
  }
  map.on('moveend', redraw);

  return {
    redraw,
    /**
     * A device's new point: its circle follows when circles are shown.
     * @param {Device} device
     * @param {GpsPoint} point
     */
    moved(device, point) {
      if (map.getZoom() < ACCURACY_ZOOM) return;
      if (point.accuracy && map.getBounds().contains([point.latitude, point.longitude])) circle(device, point);
      else {
        const gone = circles.get(device.id);
        if (gone) group.removeLayer(gone);
        circles.delete(device.id);
      }
    },
    /** @param {string} id whether the device's circle is drawn */
    has: (id) => circles.has(id),
    stop() {
      map.off('moveend', redraw);
      group.remove();
      // Removing the paths asked the canvas for a redraw: removed with them, it is cancelled (a redraw after the
      // map's removal would find no canvas).
      renderer.remove();
    },
  };
}
