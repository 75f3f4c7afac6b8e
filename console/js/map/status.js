// @ts-check
import { currentLocale } from '../i18n.js';

/**
 * A device's status in one word, from its latest point and the clock: never reported, offline (its last point older
 * than CONSOLE_STALE_AFTER_SECS), moving (faster than a walk's jitter: over 1 km/h) or stopped. The map's markers and
 * its list say the same.
 * @typedef {import('../types/routes').Schema<'GpsPoint'>} GpsPoint
 * @typedef {'moving' | 'stopped' | 'offline' | 'never'} Status
 */

/** Below this a GPS fix standing still still reports some speed. */
export const MOVING_KMH = 1;

/**
 * @param {GpsPoint | null} point
 * @param {number} staleAfterMs
 * @param {number} [now]
 * @returns {Status}
 */
export function statusOf(point, staleAfterMs, now = Date.now()) {
  if (!point) return 'never';
  if (now - Date.parse(point.timestamp) > staleAfterMs) return 'offline';
  return (point.speed_kmh ?? 0) > MOVING_KMH ? 'moving' : 'stopped';
}

/** @type {[Intl.RelativeTimeFormatUnit, number][]} units with their length in seconds, largest first */
const UNITS = [
  ['year', 365 * 86_400],
  ['month', 30 * 86_400],
  ['week', 7 * 86_400],
  ['day', 86_400],
  ['hour', 3_600],
  ['minute', 60],
  ['second', 1],
];

/** @type {Map<string, Intl.RelativeTimeFormat>} */
const formats = new Map();

/**
 * How long ago `iso` was, in the user's language: "2 min ago", "vor 2 Min.", "now".
 * @param {string} iso
 * @param {number} [now]
 */
export function ago(iso, now = Date.now()) {
  const locale = currentLocale();
  let format = formats.get(locale);
  if (!format) {
    format = new Intl.RelativeTimeFormat(locale, { numeric: 'auto', style: 'short' });
    formats.set(locale, format);
  }
  const seconds = Math.round((Date.parse(iso) - now) / 1000);
  // A point from a clock slightly ahead of ours is "now", not "in 3 seconds".
  if (seconds > -10) return format.format(0, 'second');
  const [unit, length] = UNITS.find(([, size]) => -seconds >= size) ?? ['second', 1];
  return format.format(Math.round(seconds / length), unit);
}

/** Each status's text key (the list's filter and its entries say the status in words). @type {Record<Status, string>} */
export const STATUS_TEXT = {
  moving: 'map.moving',
  stopped: 'map.stopped',
  offline: 'map.offlineStatus',
  never: 'map.never',
};
