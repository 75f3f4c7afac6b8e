// @ts-check
import { get } from './api.js';
import { h, show } from './dom.js';
import { formatNumber, speedIn, speedUnit, t } from './i18n.js';
import { L } from './map.js';

/**
 * A GPS track of any length on one canvas over the map, coloured by speed. Leaflet's polyline keeps
 * every point as an object and re-projects each on every zoom; here the points stay in typed arrays,
 * projected once to Web Mercator at zoom 0, and a redraw is a multiply-add per point. Points closer than
 * a pixel to the last one drawn are skipped, so a 100,000-point day is a few thousand segments on screen.
 * Each speed band is one path and one stroke. Points after the timeline's cursor are drawn grey.
 */
export const SPEED_COLOURS = ['#2166ac', '#1a9850', '#91bf3a', '#e6a700', '#e0561b', '#b2182b'];
const FUTURE = '#8a949e';

/**
 * A track as typed arrays: n points drawn of `total` in the range, thinned for `zoom` (null: not thinned); times in
 * milliseconds, speeds in km/h.
 * @typedef {{ n: number, total: number, zoom: number | null, time: Float64Array, lat: Float64Array, lon: Float64Array, speed: Float32Array }} Track
 */

/**
 * A track of GET /v1/gps/track (columns of numbers, thinned in the service for the map's zoom) as typed arrays.
 * Speeds a point lacks are worked out from the positions.
 * @param {import('./types/routes').Answer<'get', '/v1/gps/track'>} answer
 * @returns {Track}
 */
export function trackOf(answer) {
  const track = {
    n: answer.points,
    total: answer.total,
    zoom: answer.zoom,
    time: Float64Array.from(answer.time),
    lat: Float64Array.from(answer.latitude),
    lon: Float64Array.from(answer.longitude),
    speed: Float32Array.from(answer.speed_kmh, (kmh) => kmh ?? Number.NaN),
  };
  fillSpeeds(track);
  return track;
}

/**
 * Reads GET /v1/gps/track for `query` (device_id, from, to) thinned for `map`: for its size (the zoom at which the
 * track fits it), or for `zoom` when given; answers the track as typed arrays (trackOf).
 * @param {L.Map} map
 * @param {{ device_id: string, from: string, to: string }} query
 * @param {number} [zoom]
 */
export async function readTrack(map, query, zoom) {
  const size = map.getSize();
  /** @type {Record<string, string>} */
  const detail = zoom === undefined ? { width: String(size.x), height: String(size.y) } : { zoom: String(zoom) };
  return trackOf(await get(`/v1/gps/track?${new URLSearchParams({ ...query, ...detail })}`));
}

/**
 * Whether `map`, zoomed in past the zoom `track` was thinned for, would show its left-out points pixels apart (so it is read again).
 * @param {L.Map} map
 * @param {Track | null | undefined} track
 */
export const thinnedFor = (map, track) =>
  Boolean(track && track.zoom !== null && track.n < track.total && map.getZoom() > track.zoom);

/**
 * Shows in `element` (a p.legend) the speed bands of a drawn track, each in its colour; hidden without a track.
 * @param {HTMLElement} element
 * @param {TrackLayer | null} layer
 */
export function showLegend(element, layer) {
  element.hidden = !layer;
  if (layer)
    show(
      element,
      t('history.legend'),
      ' ',
      // The bands are in km/h, as the track's speeds; shown in the user's unit.
      ...layer.bands.map((end, i) => h('span', { class: `band band-${i}` }, `≤ ${formatNumber(speedIn(end), 0)}`)),
      ` ${speedUnit()}`,
    );
}

/**
 * Speeds a point does not carry, from the distance to the point before it and the time between.
 * @param {Track} track
 */
function fillSpeeds({ n, time, lat, lon, speed }) {
  const rad = Math.PI / 180;
  for (let i = 0; i < n; i++) {
    if (!Number.isNaN(speed[i])) continue;
    if (i === 0) {
      speed[i] = 0;
      continue;
    }
    const dLat = (lat[i] - lat[i - 1]) * rad;
    const dLon = (lon[i] - lon[i - 1]) * rad * Math.cos(lat[i] * rad);
    const km = 6371 * Math.sqrt(dLat * dLat + dLon * dLon);
    const hours = (time[i] - time[i - 1]) / 3_600_000;
    speed[i] = hours > 0 ? km / hours : 0;
  }
}

/**
 * The speed that ends each band: equal steps up to the 95th percentile, so one outlier does not grey out the rest.
 * @param {Track} track
 */
export function speedBands(track) {
  const sorted = Float32Array.from(track.speed).sort();
  const top = Math.max(5, sorted[Math.floor(sorted.length * 0.95)] ?? 0);
  return SPEED_COLOURS.map((_, i) => (top * (i + 1)) / SPEED_COLOURS.length);
}

/** The layer that draws a Track (an ES class of Leaflet's Layer, as `L.Layer.extend` would make). */
export class TrackLayer extends L.Layer {
  /** @param {Track} track */
  constructor(track) {
    super();
    this.track = track;
    this.cursor = track.n - 1;
    this.bands = speedBands(track);
    const { n, lat, lon } = track;
    // Web Mercator at zoom 0 (a 256-pixel world), as Leaflet's EPSG:3857 projects.
    this.x = new Float64Array(n);
    this.y = new Float64Array(n);
    const limit = 85.0511287798;
    for (let i = 0; i < n; i++) {
      const phi = (Math.max(-limit, Math.min(limit, lat[i])) * Math.PI) / 180;
      this.x[i] = ((lon[i] + 180) / 360) * 256;
      this.y[i] = (0.5 - Math.log(Math.tan(Math.PI / 4 + phi / 2)) / (2 * Math.PI)) * 256;
    }
    this.canvas = L.DomUtil.create('canvas', 'track-canvas');
    this.canvas.setAttribute('aria-hidden', 'true');
    this.frame = 0;
    this.redraw = () => {
      if (!this.frame)
        this.frame = requestAnimationFrame(() => {
          this.frame = 0;
          this.draw();
        });
    };
    this.hide = () => {
      this.canvas.hidden = true;
    };
  }

  /** @param {L.Map} map */
  onAdd(map) {
    map.getContainer().append(this.canvas);
    map.on('move resize', this.redraw).on('zoomend viewreset', this.redraw).on('zoomstart', this.hide);
    this.draw();
    return this;
  }

  /** @param {L.Map} map */
  onRemove(map) {
    map.off('move resize', this.redraw).off('zoomend viewreset', this.redraw).off('zoomstart', this.hide);
    cancelAnimationFrame(this.frame);
    this.canvas.remove();
    return this;
  }

  bounds() {
    const { lat, lon, n } = this.track;
    let south = 90;
    let north = -90;
    let west = 180;
    let east = -180;
    for (let i = 0; i < n; i++) {
      if (lat[i] < south) south = lat[i];
      if (lat[i] > north) north = lat[i];
      if (lon[i] < west) west = lon[i];
      if (lon[i] > east) east = lon[i];
    }
    return L.latLngBounds([south, west], [north, east]);
  }

  /** @param {number} index */
  setCursor(index) {
    this.cursor = index;
    this.redraw();
  }

  /** @param {number} speed */
  band(speed) {
    const i = this.bands.findIndex((end) => speed <= end);
    return i === -1 ? this.bands.length - 1 : i;
  }

  draw() {
    const map = this._map;
    if (!map) return;
    const size = map.getSize();
    const ratio = window.devicePixelRatio || 1;
    const canvas = this.canvas;
    canvas.hidden = false;
    if (canvas.width !== size.x * ratio || canvas.height !== size.y * ratio) {
      canvas.width = size.x * ratio;
      canvas.height = size.y * ratio;
      canvas.style.width = `${size.x}px`;
      canvas.style.height = `${size.y}px`;
    }
    const context = canvas.getContext('2d');
    if (!context) return;
    context.setTransform(ratio, 0, 0, ratio, 0, 0);
    context.clearRect(0, 0, size.x, size.y);
    const { n, speed } = this.track;
    if (!n) return;
    // Container pixel = zoom-0 position × 2^zoom + offset; the offset from where the map's centre is drawn.
    const scale = 2 ** map.getZoom();
    const center = map.getCenter();
    const here = map.latLngToContainerPoint(center);
    const world = map.project(center, map.getZoom());
    const dx = here.x - world.x;
    const dy = here.y - world.y;
    const paths = SPEED_COLOURS.map(() => new Path2D());
    const future = new Path2D();
    let lastX = this.x[0] * scale + dx;
    let lastY = this.y[0] * scale + dy;
    for (let i = 1; i < n; i++) {
      const x = this.x[i] * scale + dx;
      const y = this.y[i] * scale + dy;
      if (Math.abs(x - lastX) < 1 && Math.abs(y - lastY) < 1 && i !== this.cursor) continue;
      const path = i > this.cursor ? future : paths[this.band(speed[i])];
      path.moveTo(lastX, lastY);
      path.lineTo(x, y);
      lastX = x;
      lastY = y;
    }
    context.lineWidth = 4;
    context.lineCap = 'round';
    context.lineJoin = 'round';
    context.strokeStyle = FUTURE;
    context.stroke(future);
    paths.forEach((path, i) => {
      context.strokeStyle = SPEED_COLOURS[i];
      context.stroke(path);
    });
    const at = this.cursor;
    context.beginPath();
    context.arc(this.x[at] * scale + dx, this.y[at] * scale + dy, 7, 0, 2 * Math.PI);
    context.fillStyle = '#fff';
    context.fill();
    context.lineWidth = 3;
    context.strokeStyle = '#1b1f24';
    context.stroke();
  }
}
