// @ts-check
/**
 * A device's look on the map: its icon (car, van, boat, person, bike, generic) as a small inline SVG (no image
 * files, no CDN) and its colour: the one set on the device, else one picked from its id, so a device keeps its
 * colour from one visit to the next and two devices side by side rarely share one.
 * @typedef {import('../types/routes').Schema<'Device'>['icon']} Icon
 */

/** White on each of these has at least 3:1 contrast, as a graphic's parts need (WCAG 1.4.11). */
const PALETTE = [
  '#1a5fb4',
  '#c01c28',
  '#26803a',
  '#8f3fb3',
  '#b35900',
  '#0b7285',
  '#a51d6a',
  '#5c6b00',
  '#3949ab',
  '#8d4b2a',
  '#00796b',
  '#6d4c9f',
];

/**
 * The device's colour: its own, else a stable pick from the palette by its id.
 * @param {{ id: string, color: string | null }} device
 */
export function colourOf(device) {
  if (device.color) return device.color;
  let hash = 0;
  for (const char of device.id) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
  return PALETTE[hash % PALETTE.length];
}

/** 24 × 24 outlines, drawn white on the device's colour. */
const PATHS = {
  car: 'M5 17h-1v-5l2-5h12l2 5v5h-1M7 17a2 2 0 1 0 0 .1M17 17a2 2 0 1 0 0 .1M5 12h14M9 17h6',
  van: 'M3 17V7h11l4 4h3v6h-1M3 17h2M10 17h5M7 17a2 2 0 1 0 0 .1M17 17a2 2 0 1 0 0 .1M14 7v4h4',
  boat: 'M3 16l2 4h14l2-4H3M12 4v10M12 5l6 8h-6M12 7l-5 6h5',
  person: 'M12 4a2 2 0 1 0 0 .1M12 8v6M8 10h8M12 14l-3 6M12 14l3 6',
  bike: 'M6 17a3 3 0 1 0 0 .1M18 17a3 3 0 1 0 0 .1M6 17l4-7h6l2 7M10 10l-1-3H7M16 10l-2 7h-4',
  generic: 'M12 8a4 4 0 1 0 0 .1',
};

const SVG = 'http://www.w3.org/2000/svg';

/**
 * The icon as an SVG element (hidden from screen readers: the marker's name says which device it is).
 * @param {Icon} icon
 */
export function iconSvg(icon) {
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('focusable', 'false');
  const path = document.createElementNS(SVG, 'path');
  path.setAttribute('d', PATHS[icon] ?? PATHS.generic);
  svg.append(path);
  return svg;
}
