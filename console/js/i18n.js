// @ts-check
import en from '../i18n/en.json' with { type: 'json' };
import de from '../i18n/de.json' with { type: 'json' };

/** The console's texts in the locales the service mails in; the user's `preferred_locale` picks one, else the browser's language. */
// JSON modules: one message file per locale (console/i18n/), loaded with the page, no build.
/** @type {Record<string, Record<string, string>>} */
const messages = { en, de };

let locale = 'en';

/**
 * Picks the locale: `wanted` when there are texts in it, else the browser's first language with texts, else English.
 * @param {string | null | undefined} wanted
 * @returns {string}
 */
export function setLocale(wanted) {
  const candidates = [wanted, ...(navigator.languages ?? [navigator.language])]
    .filter(Boolean)
    .map((tag) => String(tag).toLowerCase().split('-')[0]);
  locale = candidates.find((tag) => messages[tag]) ?? 'en';
  document.documentElement.lang = locale;
  return locale;
}

export const currentLocale = () => locale;

/**
 * The text of `key` in the locale, `{name}` placeholders filled from `values`.
 * @param {string} key
 * @param {Record<string, string | number>} [values]
 * @returns {string}
 */
export function t(key, values = {}) {
  const text = messages[locale]?.[key] ?? messages.en?.[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (_, name) => String(values[name] ?? ''));
}

/**
 * The user's preferences (GET /v1/users/me/preferences), kept on the account: every page formats speeds,
 * distances, times and coordinates through the functions below, so one change shows everywhere.
 * @typedef {import('./types/api').components['schemas']['UserPreferences']} Preferences
 */
/** @type {Preferences} */
export const DEFAULT_PREFERENCES = Object.freeze({
  speed_unit: 'kmh',
  distance_unit: 'km',
  time_zone: null,
  coordinate_format: 'decimal',
});
/** @type {Preferences} */
let preferences = DEFAULT_PREFERENCES;

/** @param {Preferences} chosen */
export function setPreferences(chosen) {
  preferences = { ...DEFAULT_PREFERENCES, ...chosen };
}
export const currentPreferences = () => preferences;

/** The time zone times are shown in: the chosen one, else the browser's. */
const timeZone = () => preferences.time_zone ?? undefined;

/** @type {Map<string, Intl.DateTimeFormat>} */
const wallFormats = new Map();
/**
 * The wall-clock time of an instant in the chosen time zone (else the browser's), as a datetime-local field
 * holds it: "2026-11-29T22:05".
 * @param {Date} date
 */
export function wallTime(date) {
  const zone = timeZone() ?? '';
  let format = wallFormats.get(zone);
  if (!format) {
    const options = { hourCycle: /** @type {const} */ ('h23'), timeZone: timeZone() };
    format = new Intl.DateTimeFormat('en-CA', {
      ...options,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
    });
    wallFormats.set(zone, format);
  }
  const part = Object.fromEntries(format.formatToParts(date).map(({ type, value }) => [type, value]));
  return `${part.year}-${part.month}-${part.day}T${part.hour}:${part.minute}`;
}

/** Minutes since the epoch of a wall time read as if it were UTC. @param {string} value "YYYY-MM-DDTHH:mm" */
const asUtc = (value) => Date.parse(`${value.slice(0, 16)}:00Z`);

/**
 * The instant a wall-clock time (a datetime-local field's value) names in the chosen time zone (else the
 * browser's). The zone's offset is found by asking what wall time a guess shows, twice (the second pass settles a
 * guess that crossed a clock change); a time skipped by a clock change moves forward by the change.
 * @param {string} value "YYYY-MM-DDTHH:mm"
 */
export function fromWallTime(value) {
  const wanted = asUtc(value);
  let instant = wanted;
  for (let pass = 0; pass < 2; pass++) instant += wanted - asUtc(wallTime(new Date(instant)));
  return new Date(instant);
}

/** @param {string | number | Date} iso */
export const formatTime = (iso) =>
  new Date(iso).toLocaleString(locale, { dateStyle: 'short', timeStyle: 'medium', timeZone: timeZone() });
/** A day without its time ("31/12/2026", in the locale's way). @param {string | number | Date} iso */
export const formatDate = (iso) =>
  new Date(iso).toLocaleDateString(locale, { dateStyle: 'medium', timeZone: timeZone() });
/** @param {number | string} value */
export const formatNumber = (value, digits = 5) =>
  Number(value).toLocaleString(locale, { maximumFractionDigits: digits });

/** Per unit: its factor from km/h (its label: the text `unit.<name>`). */
const SPEEDS = { kmh: 1, mph: 1 / 1.609344, knots: 1 / 1.852 };
/** Per unit: metres in one (its label: the text `unit.<name>`). */
const DISTANCES = { km: 1000, mi: 1609.344, nmi: 1852 };

/** A speed given in km/h, in the user's unit, with it ("18 km/h", "9.7 kn"). @param {number} kmh */
export const formatSpeed = (kmh, digits = 0) => `${formatNumber(speedIn(kmh), digits)} ${speedUnit()}`;
/** A speed given in km/h as a bare number in the user's unit (chart axes, legends). @param {number} kmh */
export const speedIn = (kmh) => kmh * SPEEDS[preferences.speed_unit];
/** A speed given in the user's unit, in km/h (what the API takes). @param {number} value */
export const kmhFrom = (value) => value / SPEEDS[preferences.speed_unit];
/** The label of the user's speed unit. */
export const speedUnit = () => t(`unit.${preferences.speed_unit}`);

/** A distance given in metres, in the user's unit ("12.4 km", "6.7 nmi"). @param {number} metres */
export const formatDistance = (metres, digits = 1) =>
  `${formatNumber(metres / DISTANCES[preferences.distance_unit], digits)} ${t(`unit.${preferences.distance_unit}`)}`;

/**
 * One coordinate in the user's format: decimal degrees, degrees and decimal minutes, or degrees, minutes and
 * seconds, the last two with the hemisphere's letter (N, S, E, W; in German O for east).
 * @param {number} value @param {'lat' | 'lon'} axis
 */
function formatCoordinate(value, axis) {
  const format = preferences.coordinate_format;
  if (format === 'decimal') return formatNumber(value, 5);
  const hemisphere = t(`compass.${axis === 'lat' ? (value < 0 ? 'S' : 'N') : value < 0 ? 'W' : 'E'}`);
  // Counted in steps of the last digit shown, so rounding carries into the degree (never a 60′).
  if (format === 'dm') {
    const thousandths = Math.round(Math.abs(value) * 60_000);
    return `${Math.floor(thousandths / 60_000)}° ${formatNumber((thousandths % 60_000) / 1000, 3)}′ ${hemisphere}`;
  }
  const tenths = Math.round(Math.abs(value) * 36_000);
  const seconds = formatNumber((tenths % 600) / 10, 1);
  return `${Math.floor(tenths / 36_000)}° ${Math.floor((tenths % 36_000) / 600)}′ ${seconds}″ ${hemisphere}`;
}

/** A position in the user's coordinate format ("53.55012, 9.99301" or "53° 33.007′ N, 9° 59.581′ E"). */
export const formatPosition = (/** @type {number} */ latitude, /** @type {number} */ longitude) =>
  `${formatCoordinate(latitude, 'lat')}, ${formatCoordinate(longitude, 'lon')}`;
