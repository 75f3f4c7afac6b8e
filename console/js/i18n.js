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

/** @param {string | number | Date} iso */
export const formatTime = (iso) => new Date(iso).toLocaleString(locale, { dateStyle: 'short', timeStyle: 'medium' });
/** A day without its time ("31/12/2026", in the locale's way). @param {string | number | Date} iso */
export const formatDate = (iso) => new Date(iso).toLocaleDateString(locale, { dateStyle: 'medium' });
/** @param {number | string} value */
export const formatNumber = (value, digits = 5) =>
  Number(value).toLocaleString(locale, { maximumFractionDigits: digits });
