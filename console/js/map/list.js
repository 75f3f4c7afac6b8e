// @ts-check
import { field, h, show } from '../dom.js';
import { currentLocale, t } from '../i18n.js';
import { STATUS_TEXT } from './status.js';

/**
 * The device list's controls and order: search by name, a status to show (all, moving, stopped, offline, never
 * reported) and the order (by name, or last seen first). The page renders each entry (`renderEntry`); this module
 * decides which entries are listed and in what order, and puts only the rows in view (and a few around them) into
 * the page: every row is one height (console.css), so ten thousand devices are a list of some thirty elements whose
 * empty space above and below is padding, and scrolling renders the rows that come into view.
 * @typedef {import('./status.js').Status} Status
 * @typedef {{ device: { id: string, name: string }, point: { timestamp: string } | null }} Listed
 */

const STATUSES = /** @type {const} */ (['moving', 'stopped', 'offline', 'never']);

/**
 * @template {Listed} E
 * @param {{
 *   list: HTMLUListElement,
 *   entries: () => Iterable<E>,
 *   statusOf: (entry: E) => Status,
 *   renderEntry: (entry: E) => HTMLLIElement,
 * }} options
 */
export function createDeviceList({ list, entries, statusOf, renderEntry }) {
  const search = field(t('map.search'), { type: 'search', autocomplete: 'off' });
  const status = field(t('map.filter'), { tag: 'select' });
  show(
    status.input,
    h('option', { value: '' }, t('map.filterAll')),
    ...STATUSES.map((value) => h('option', { value }, t(STATUS_TEXT[value]))),
  );
  const order = field(t('map.sort'), { tag: 'select' });
  show(
    order.input,
    h('option', { value: 'name' }, t('map.sortName')),
    h('option', { value: 'seen' }, t('map.sortSeen')),
  );
  const count = h('p', { class: 'meta muted' });
  const controls = h('div', { class: 'device-filters' }, search.wrapper, status.wrapper, order.wrapper);

  /** Rows rendered above and below those in view, so a quick scroll does not show empty space first. */
  const EXTRA = 8;
  /** @type {E[]} the entries listed, in order */
  let shown = [];
  let rowHeight = 0;
  /** @type {[number, number]} the rows in the page: from, to (exclusive) */
  let window_ = [0, 0];

  // One collator for every comparison: localeCompare builds one per call, which for 10,000 names is most of a sort.
  const names = new Intl.Collator(currentLocale());
  /** @param {E} entry */
  const seen = (entry) => (entry.point ? Date.parse(entry.point.timestamp) : -Infinity);
  /** @param {E} a @param {E} b */
  const byName = (a, b) => names.compare(a.device.name, b.device.name);

  /** Lists the entries that match the search and the status, in the chosen order. */
  function render() {
    const wanted = search.input.value.trim().toLocaleLowerCase();
    const only = status.input.value;
    const all = [...entries()];
    shown = all.filter(
      (entry) =>
        (!wanted || entry.device.name.toLocaleLowerCase().includes(wanted)) && (!only || statusOf(entry) === only),
    );
    shown.sort(order.input.value === 'seen' ? (a, b) => seen(b) - seen(a) || byName(a, b) : byName);
    count.textContent = shown.length === all.length ? '' : t('map.shown', { shown: shown.length, all: all.length });
    window_ = [0, 0];
    list.style.paddingTop = list.style.paddingBottom = '';
    if (all.length === 0) return show(list, h('li', { class: 'muted' }, t('map.noDevices')));
    if (shown.length === 0) return show(list, h('li', { class: 'muted' }, t('map.noMatch')));
    renderWindow(true);
  }

  /** The rows in view: those of the scrolled box (the list's parent) over the list. */
  function inView() {
    const box = /** @type {HTMLElement} */ (list.parentElement);
    const top = box.scrollTop - list.offsetTop;
    const from = Math.max(0, Math.floor(top / rowHeight) - EXTRA);
    const to = Math.min(shown.length, Math.ceil((top + box.clientHeight) / rowHeight) + EXTRA);
    return /** @type {[number, number]} */ ([from, Math.max(from, to)]);
  }

  /**
   * Renders the rows in view, with padding for those above and below; again only when that window changed.
   * @param {boolean} [again] render even if the window is the same (the entries changed)
   */
  function renderWindow(again = false) {
    if (!rowHeight) {
      // The height of every row, measured once from the first (console.css gives them all one).
      show(list, row(shown[0]));
      rowHeight = /** @type {HTMLElement} */ (list.firstElementChild).offsetHeight || 80;
    }
    const [from, to] = inView();
    if (!again && from === window_[0] && to === window_[1]) return;
    window_ = [from, to];
    show(list, ...shown.slice(from, to).map(row));
    list.style.paddingTop = `${from * rowHeight}px`;
    list.style.paddingBottom = `${(shown.length - to) * rowHeight}px`;
  }

  /** @param {E} entry */
  function row(entry) {
    const item = renderEntry(entry);
    item.classList.add('row');
    return item;
  }

  /** @type {number} */
  let frame = 0;
  const scrolled = () => {
    frame ||= requestAnimationFrame(() => {
      frame = 0;
      if (shown.length && rowHeight) renderWindow();
    });
  };
  list.parentElement?.addEventListener('scroll', scrolled, { passive: true });
  window.addEventListener('resize', scrolled);
  search.input.addEventListener('input', render);
  status.input.addEventListener('change', render);
  order.input.addEventListener('change', render);

  return {
    controls,
    count,
    render,
    /** Whether a device's new point may change the list's order or what it shows (then it is listed again). */
    reorders: () => order.input.value === 'seen' || status.input.value !== '',
    stop() {
      window.removeEventListener('resize', scrolled);
      cancelAnimationFrame(frame);
    },
  };
}
