// @ts-check
import './leaflet-global.js';
import '../../vendor/leaflet.markercluster/leaflet.markercluster-src.js';
import { h } from '../dom.js';
import { t } from '../i18n.js';
import { L } from '../map.js';

/**
 * Markers that crowd are drawn as one cluster with their number (Leaflet.markercluster, MIT, vendored from npm as
 * Leaflet is): ten thousand devices are a few dozen elements on the map, and a click on a cluster zooms into it. Close
 * in (zoom 16 and more) every marker stands alone.
 * @typedef {L.FeatureGroup & {
 *   addLayers(layers: L.Layer[], skipLayerAddEvent?: boolean): unknown,
 *   removeLayers(layers: L.Layer[]): unknown,
 *   zoomToShowLayer(layer: L.Layer, callback?: () => void): void,
 *   getVisibleParent(marker: L.Marker): L.Marker | null,
 *   refreshClusters(layers?: L.Layer[]): unknown,
 * }} Clusters
 * @typedef {{ getChildCount(): number, getAllChildMarkers(): L.Marker[] }} Cluster
 */

/** @typedef {new (options: object) => Clusters} ClustersClass */

/** Markers closer than this many pixels gather into one cluster. */
const RADIUS = 80;

/**
 * @param {L.Map} map
 * @returns {Clusters}
 */
export function createClusters(map) {
  const ClusterGroup = /** @type {{ L: { MarkerClusterGroup: ClustersClass } }} */ (/** @type {unknown} */ (globalThis))
    .L.MarkerClusterGroup;
  const clusters = new ClusterGroup({
    maxClusterRadius: RADIUS,
    disableClusteringAtZoom: 16,
    showCoverageOnHover: false,
    spiderfyOnMaxZoom: false,
    // Ten thousand markers are added in slices between frames, so the page answers while they are.
    chunkedLoading: true,
    // A marker moving inside a cluster is re-sorted without animation (a thousand moves a second).
    animate: false,
    /** @param {Cluster} cluster */
    iconCreateFunction: (cluster) => {
      const count = cluster.getChildCount();
      const size = count < 10 ? 30 : count < 100 ? 36 : count < 1000 ? 42 : 48;
      return L.divIcon({
        className: 'device-cluster',
        iconSize: [size, size],
        html: h(
          'span',
          {},
          h('span', { 'aria-hidden': 'true' }, String(count)),
          h('span', { class: 'visually-hidden' }, t('map.cluster', { count })),
        ),
      });
    },
  });
  map.addLayer(clusters);
  return clusters;
}
