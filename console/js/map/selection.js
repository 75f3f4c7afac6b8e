// @ts-check
import { h } from '../dom.js';
import { t } from '../i18n.js';

/**
 * Selecting a device (its marker or its entry in the list) zooms to it, opens its details and follows it: each new
 * point of the device moves the map with it, until the user pans the map (drag or arrow keys) or presses Stop. A bar
 * over the map says whom the map follows.
 * @typedef {{ name: string, latLng: () => L.LatLng | null, open: () => void }} Target
 */

/** Close enough to see the street, and past the zoom where markers gather into clusters. */
const ZOOM = 16;
const ARROWS = new Set(['ArrowUp', 'ArrowDown', 'ArrowLeft', 'ArrowRight']);

/**
 * @param {import('../map.js').L.Map} map
 * @param {(id: string) => Target | null} targetOf
 */
export function createSelection(map, targetOf) {
  /** @type {string | null} */
  let followed = null;
  const name = h('span');
  const bar = h(
    'div',
    { class: 'follow-bar', hidden: true },
    name,
    h('button', { type: 'button', class: 'secondary', onclick: () => stop() }, t('map.followStop')),
  );

  function stop() {
    followed = null;
    bar.hidden = true;
  }
  map.on('dragstart', stop);
  map.getContainer().addEventListener('keydown', (event) => {
    if (ARROWS.has(event.key) && event.target === map.getContainer()) stop();
  });

  return {
    /** The bar that says whom the map follows (placed over the map by the page). */
    bar,
    /** @returns {string | null} the followed device's id */
    followed: () => followed,
    stop,
    /**
     * Zooms to the device, opens its details and follows it.
     * @param {string} id
     */
    select(id) {
      const target = targetOf(id);
      const at = target?.latLng();
      if (!target || !at) return;
      map.setView(at, Math.max(map.getZoom(), ZOOM), { animate: false });
      target.open();
      followed = id;
      name.textContent = t('map.following', { name: target.name });
      bar.hidden = false;
    },
    /**
     * A device moved: the map moves with it when it is followed.
     * @param {string} id
     */
    moved(id) {
      if (id !== followed) return;
      const at = targetOf(id)?.latLng();
      if (at) map.panTo(at, { animate: true, duration: 0.3 });
    },
  };
}
