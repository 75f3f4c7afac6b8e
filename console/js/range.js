// @ts-check
import { field, h } from './dom.js';
import { t } from './i18n.js';

/** @param {number} value */
const pad = (value) => String(value).padStart(2, '0');
/** A datetime-local value (the browser's time zone) for a Date. @param {Date} date */
const localValue = (date) =>
  `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;

/**
 * The start of the day `date` is in, `days` days later (calendar days: a day of a clock change still starts at 0:00).
 * @param {Date} date
 */
function dayStart(date, days = 0) {
  const start = new Date(date);
  start.setHours(0, 0, 0, 0);
  start.setDate(start.getDate() + days);
  return start;
}
/** The last minute of the day `date` is in (the field's precision; the range's end takes that minute in whole). */
const dayEnd = (/** @type {Date} */ date) => new Date(dayStart(date, 1).getTime() - 60_000);

/**
 * History's From and To (datetime-local, the browser's time zone, to the minute; To takes its minute in whole),
 * with the presets Today, Yesterday and Last 7 days, and Previous and Next day, which move the range a calendar
 * day, keeping its times and length. Each button sets the range and calls `onChange` (History then reads it).
 * @param {() => void} onChange
 */
export function rangeFields(onChange) {
  const from = field(t('history.from'), { name: 'from', type: 'datetime-local', required: true });
  const to = field(t('history.to'), { name: 'to', type: 'datetime-local', required: true });

  /** Shows `start` to `end`, both within whole days when `whole` (the end then its day's last minute). */
  const set = (/** @type {Date} */ start, /** @type {Date} */ end, whole = false) => {
    from.input.value = localValue(whole ? dayStart(start) : start);
    to.input.value = localValue(whole ? dayEnd(end) : end);
  };
  set(new Date(), new Date(), true);

  /** @param {string} label @param {() => void} choose */
  const button = (label, choose) =>
    h(
      'button',
      {
        type: 'button',
        class: 'secondary',
        onclick: () => {
          choose();
          onChange();
        },
      },
      label,
    );
  /** Moves the range `days` calendar days. @param {number} days */
  const shift = (days) => {
    const start = new Date(from.input.value);
    const end = new Date(to.input.value);
    start.setDate(start.getDate() + days);
    end.setDate(end.getDate() + days);
    set(start, end);
  };
  const presets = h(
    'div',
    { class: 'row presets', role: 'group', 'aria-label': t('history.presets') },
    button(t('history.previousDay'), () => shift(-1)),
    button(t('history.today'), () => set(new Date(), new Date(), true)),
    button(t('history.yesterday'), () => set(dayStart(new Date(), -1), dayStart(new Date(), -1), true)),
    button(t('history.lastWeek'), () => set(dayStart(new Date(), -6), new Date(), true)),
    button(t('history.nextDay'), () => shift(1)),
  );

  return {
    from,
    to,
    presets,
    /** Shows the whole days from `start`'s to `end`'s (an import's range). */
    showDays: (/** @type {Date} */ start, /** @type {Date} */ end) => set(start, end, true),
    /** The range as ISO times for the API; To's minute counts in whole. */
    range: () => ({
      from: new Date(from.input.value).toISOString(),
      to: new Date(new Date(to.input.value).getTime() + 59_999).toISOString(),
    }),
  };
}
