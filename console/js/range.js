// @ts-check
import { field, h } from './dom.js';
import { fromWallTime, t, wallTime } from './i18n.js';

/**
 * A wall time `days` calendar days later (calendar arithmetic on the wall time itself: a day of a clock change
 * still starts at 0:00).
 * @param {string} value "YYYY-MM-DDTHH:mm"
 * @param {number} days
 */
const addDays = (value, days) =>
  new Date(Date.parse(`${value.slice(0, 16)}:00Z`) + days * 86_400_000).toISOString().slice(0, 16);
/** The start of the day `value` is in, `days` days later. @param {string} value */
const dayStart = (value, days = 0) => addDays(`${value.slice(0, 10)}T00:00`, days);
/** The last minute of the day `value` is in (the field's precision; the range's end takes that minute in whole). */
const dayEnd = (/** @type {string} */ value) => `${value.slice(0, 10)}T23:59`;
/** Now, as the fields show it. */
const now = () => wallTime(new Date());

/**
 * History's From and To (datetime-local, to the minute, in the time zone of the user's preferences, else the
 * browser's; To takes its minute in whole), with the presets Today, Yesterday and Last 7 days, and Previous and
 * Next day, which move the range a calendar day, keeping its times and length. Each button sets the range and
 * calls `onChange` (History then reads it).
 * @param {() => void} onChange
 */
export function rangeFields(onChange) {
  const from = field(t('history.from'), { name: 'from', type: 'datetime-local', required: true });
  const to = field(t('history.to'), { name: 'to', type: 'datetime-local', required: true });

  /** Shows `start` to `end` (wall times), both within whole days when `whole` (the end then its day's last minute). */
  const set = (/** @type {string} */ start, /** @type {string} */ end, whole = false) => {
    from.input.value = whole ? dayStart(start) : start;
    to.input.value = whole ? dayEnd(end) : end;
  };
  set(now(), now(), true);

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
  const shift = (days) => set(addDays(from.input.value, days), addDays(to.input.value, days));
  const presets = h(
    'div',
    { class: 'row presets', role: 'group', 'aria-label': t('history.presets') },
    button(t('history.previousDay'), () => shift(-1)),
    button(t('history.today'), () => set(now(), now(), true)),
    button(t('history.yesterday'), () => set(dayStart(now(), -1), dayStart(now(), -1), true)),
    button(t('history.lastWeek'), () => set(dayStart(now(), -6), now(), true)),
    button(t('history.nextDay'), () => shift(1)),
  );

  return {
    from,
    to,
    presets,
    /** Shows the whole days from `start`'s to `end`'s (an import's range). */
    showDays: (/** @type {Date} */ start, /** @type {Date} */ end) => set(wallTime(start), wallTime(end), true),
    /** The range as ISO times for the API; To's minute counts in whole. */
    range: () => ({
      from: fromWallTime(from.input.value).toISOString(),
      to: new Date(fromWallTime(to.input.value).getTime() + 59_999).toISOString(),
    }),
  };
}
