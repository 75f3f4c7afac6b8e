// @ts-check
import { L } from '../map.js';

/**
 * Leaflet.markercluster is a script written for a global `L` it can add to. Leaflet's ES module sets none, and its
 * namespace object cannot be added to, so the plugin gets a copy: the same classes (which it extends and patches),
 * in an object that takes its MarkerClusterGroup. Imported before the plugin (clusters.js), so it runs first.
 */
/** @type {Record<string, unknown>} */ (globalThis).L = { ...L };
