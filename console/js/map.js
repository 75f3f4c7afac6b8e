// @ts-check
import './leaflet-flags.js';
import * as L from '../vendor/leaflet/leaflet-src.esm.js';

/**
 * A Leaflet map with the configured tiles (MAP_TILE_URL) and their attribution, labelled for screen readers.
 * @param {HTMLElement} element
 * @param {import('./types/console').ConsoleConfig} config
 * @param {string} label
 */
export function createMap(element, config, label) {
  element.setAttribute('role', 'region');
  element.setAttribute('aria-label', label);
  const map = L.map(element, { preferCanvas: false, zoomControl: true, attributionControl: true }).setView([51, 10], 4);
  L.tileLayer(config.tileUrl, { maxZoom: 19, attribution: config.tileAttribution, crossOrigin: false }).addTo(map);
  map.attributionControl.setPrefix(false);
  // Leaflet's own container takes focus for keyboard panning; it needs a name too.
  element.setAttribute('tabindex', '0');
  return map;
}

/**
 * Removes a map when its page goes. A zoom or pan still animating would call into the removed panes
 * (Leaflet's "_leaflet_pos of undefined"), so the animation is stopped and every listener dropped first.
 * @param {L.Map} map
 */
export function removeMap(map) {
  map.stop();
  map.off();
  map.remove();
}

export { L };
