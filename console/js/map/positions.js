// @ts-check
import { h } from '../dom.js';
import { L } from '../map.js';
import { colourOf, iconSvg } from './icons.js';

/**
 * Every device at its latest position: a marker in the device's colour with its icon and its name beside it, a
 * heading arrow while it moves with a known heading, greyed out when offline. The markers live in the cluster layer
 * (clusters.js); a point moves its marker and turns its arrow in place, and the marker's icon is built once.
 * @typedef {import('../types/routes').Schema<'GpsPoint'>} GpsPoint
 * @typedef {import('../types/routes').Schema<'Device'>} Device
 * @typedef {import('./status.js').Status} Status
 */

/** Half the marker's size in pixels: its anchor is its middle. */
const HALF = 14;

/**
 * A device's look, built when its marker is drawn (not when it is made: of ten thousand markers most wait inside a
 * cluster, and one leaving a cluster is drawn anew).
 */
class DeviceIcon extends L.DivIcon {
  /** @param {Device} device */
  constructor(device) {
    super({ className: 'device-marker', iconSize: [HALF * 2, HALF * 2] });
    this.device = device;
  }

  /** @param {HTMLElement} [old] */
  createIcon(old) {
    const look = h(
      'span',
      { class: 'device-look' },
      h('span', { class: 'device-heading', 'aria-hidden': 'true' }),
      h('span', { class: 'device-dot' }, iconSvg(this.device.icon)),
      h('span', { class: 'device-label', 'aria-hidden': 'true' }, this.device.name),
    );
    look.style.setProperty('--device-colour', colourOf(this.device));
    this.options.html = look;
    return super.createIcon(old);
  }
}

/**
 * @param {import('./clusters.js').Clusters} layer
 * @param {{ popup: (id: string) => HTMLElement, onClick: (id: string) => void }} handlers
 */
export function createPositions(layer, { popup, onClick }) {
  /** @type {Map<string, L.Marker>} */
  const markers = new Map();
  /** @type {Map<string, { device: Device, point: GpsPoint, status: Status }>} what each marker shows, for when it is drawn again */
  const shown = new Map();
  /** @type {L.Marker[]} markers made while the page loads, added to the layer in one call */
  let batch = [];
  let batching = false;

  /**
   * Marks the marker's element with the device and its state (the tests and the benchmark read these too).
   * @param {L.Marker} marker
   * @param {Device} device
   * @param {GpsPoint} point
   * @param {Status} status
   */
  function mark(marker, device, point, status) {
    const element = marker.getElement();
    if (!element) return;
    element.setAttribute('aria-label', device.name);
    element.dataset.device = device.id;
    element.dataset.latitude = String(point.latitude);
    element.dataset.longitude = String(point.longitude);
    element.dataset.status = status;
    element.classList.toggle('is-stale', status === 'offline');
    const heading = status === 'moving' && point.heading !== null;
    element.classList.toggle('has-heading', heading);
    if (heading) element.style.setProperty('--heading', `${point.heading}deg`);
  }

  return {
    /** Markers placed until end() go onto the map together (markercluster sorts a batch far faster). */
    begin() {
      batching = true;
    },
    end() {
      batching = false;
      layer.addLayers(batch);
      batch = [];
    },
    /**
     * Puts the device's marker at its point (made on its first point).
     * @param {Device} device
     * @param {GpsPoint} point
     * @param {Status} status
     */
    place(device, point, status) {
      /** @type {L.LatLngTuple} */
      const position = [point.latitude, point.longitude];
      let marker = markers.get(device.id);
      if (!marker) {
        marker = L.marker(position, {
          icon: new DeviceIcon(device),
          keyboard: true,
          title: device.name,
          alt: device.name,
        });
        marker.bindPopup(() => popup(device.id));
        marker.on('click', () => onClick(device.id));
        // Out of a cluster (or back in view) the marker gets a new element: marked again.
        const added = marker;
        marker.on('add', () => {
          const now = shown.get(device.id);
          if (now) mark(added, now.device, now.point, now.status);
        });
        markers.set(device.id, marker);
        if (batching) batch.push(marker);
        else layer.addLayer(marker);
      } else {
        marker.setLatLng(position);
        if (marker.isPopupOpen()) marker.setPopupContent(popup(device.id));
      }
      shown.set(device.id, { device, point, status });
      mark(marker, device, point, status);
    },
    /** @param {string} id */
    marker: (id) => markers.get(id),
    /** Whether the device's marker is on the map by itself (not inside a cluster). @param {string} id */
    alone: (id) => Boolean(markers.get(id)?.getElement()),
    /** @param {string} id */
    remove(id) {
      const marker = markers.get(id);
      if (marker) layer.removeLayer(marker);
      markers.delete(id);
      shown.delete(id);
    },
  };
}
