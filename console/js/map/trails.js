// @ts-check
import { L } from '../map.js';
import { colourOf } from './icons.js';

/**
 * A short trail behind each moving device: its live points of the last few minutes (those the WebSocket brought while
 * the page is open; nothing is read for it), in the device's colour, fading with age. All trails are drawn on one
 * canvas; each is at most three lines (newer parts more opaque), redrawn when its device moves and as they age.
 * @typedef {import('../types/routes').Schema<'GpsPoint'>} GpsPoint
 * @typedef {import('../types/routes').Schema<'Device'>} Device
 */

export const TRAIL_MS = 5 * 60_000;
/** A trail keeps at most this many points (a tracker sending every second fills five minutes with 300). */
const MAX_POINTS = 120;
/** Opacity of the oldest, middle and newest third of a trail. */
const FADE = [0.2, 0.45, 0.8];

/** @param {L.Map} map */
export function createTrails(map) {
  const renderer = L.canvas({ padding: 0.2 });
  const group = L.layerGroup().addTo(map);
  /** @type {Map<string, { device: Device, points: { at: number, latLng: L.LatLng }[], lines: L.Polyline[] }>} */
  const trails = new Map();

  /** @param {NonNullable<ReturnType<typeof trails.get>>} trail @param {number} now */
  function draw(trail, now) {
    trail.points = trail.points.filter((point) => now - point.at <= TRAIL_MS).slice(-MAX_POINTS);
    for (const line of trail.lines) group.removeLayer(line);
    trail.lines = [];
    if (trail.points.length < 2) return;
    const colour = colourOf(trail.device);
    FADE.forEach((opacity, third) => {
      // Each third ends where the next begins, so the trail has no gaps.
      const from = Math.floor(((trail.points.length - 1) * third) / FADE.length);
      const to = Math.ceil(((trail.points.length - 1) * (third + 1)) / FADE.length);
      const part = trail.points.slice(from, to + 1).map((point) => point.latLng);
      if (part.length < 2) return;
      const line = L.polyline(part, { renderer, color: colour, weight: 3, opacity, interactive: false });
      trail.lines.push(line);
      group.addLayer(line);
    });
  }

  const timer = setInterval(() => {
    const now = Date.now();
    for (const [id, trail] of trails) {
      // Trails on the map fade; those of clustered devices only forget their old points.
      if (trail.lines.length) draw(trail, now);
      else trail.points = trail.points.filter((point) => now - point.at <= TRAIL_MS);
      if (!trail.points.length) trails.delete(id);
    }
  }, 20_000);

  return {
    /**
     * A live point of the device: its trail grows (a point older than the trail's newest is left out). It is drawn
     * only when `shown` (the device's marker stands alone on the map, not inside a cluster): a thousand devices
     * moving each second far out are points kept, not lines drawn.
     * @param {Device} device
     * @param {GpsPoint} point
     * @param {boolean} shown
     */
    add(device, point, shown) {
      const at = Date.parse(point.timestamp);
      const now = Date.now();
      if (now - at > TRAIL_MS) return;
      let trail = trails.get(device.id);
      if (!trail) {
        trail = { device, points: [], lines: [] };
        trails.set(device.id, trail);
      }
      // (Two points in one second are both kept: trackers send whole seconds.)
      const last = trail.points.at(-1);
      if (last && last.at > at) return;
      trail.points.push({ at, latLng: L.latLng(point.latitude, point.longitude) });
      if (shown) draw(trail, now);
      else if (trail.points.length > MAX_POINTS) trail.points.shift();
    },
    /** @param {string} id */
    has: (id) => (trails.get(id)?.lines.length ?? 0) > 0,
    stop() {
      clearInterval(timer);
      group.remove();
      // Removing the paths asked the canvas for a redraw: removed with them, it is cancelled (a redraw after the
      // map's removal would find no canvas).
      renderer.remove();
    },
  };
}
