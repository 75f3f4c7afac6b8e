// @ts-check
/**
 * Read by Leaflet when it loads (map.js imports this first): markers and panes positioned with left/top rather
 * than translate3d, so a thousand device markers are not a thousand compositor layers, which in Chromium
 * without a GPU made every moved marker cost a long frame.
 */
globalThis.L_DISABLE_3D = true;
