// @ts-check
import { del, get } from './api.js';
import { announce, confirmingButton, errorBox, h, show } from './dom.js';
import { reportOf } from './files.js';
import { formatNumber, formatTime, t } from './i18n.js';

/** @typedef {import('./types/routes').Schema<'GpsImport'>} GpsImport */

/** The imports listed: the newest page of them (GET /v1/gps/imports answers newest first). */
const SHOWN = 20;

/**
 * The user's past imports (GET /v1/gps/imports), each with its report, a button that shows its points in History
 * and one that removes them (DELETE /v1/gps/imports/{id}/points: exactly the points it stored, never those the
 * device had before or sent since; points in a trip stay, and the answer counts them).
 * @param {{
 *   deviceName: (id: string) => string,
 *   canRemove: (item: GpsImport) => boolean,
 *   onShow: (item: GpsImport) => Promise<void>,
 *   onRemoved: (item: GpsImport) => void,
 * }} options
 */
export function pastImports({ deviceName, canRemove, onShow, onRemoved }) {
  const list = h('ul', { class: 'past-imports-list' });
  const problem = h('div');
  const element = h('details', { class: 'past-imports' }, h('summary', {}, t('imports.title')), problem, list);
  /** @type {GpsImport[]} */
  let items = [];

  /** @param {GpsImport} item */
  function entry(item) {
    const name = `${deviceName(item.device_id)}, ${formatTime(item.created_at)}`;
    const remove = confirmingButton({
      label: t('imports.remove'),
      confirmLabel: t('imports.removeConfirm'),
      name,
      action: async () => {
        try {
          const { data } = await del(`/v1/gps/imports/${item.id}/points`);
          show(problem);
          replace(data.import);
          announce(
            t('imports.removed', { count: formatNumber(data.removed, 0), kept: formatNumber(data.kept_in_trips, 0) }),
          );
          onRemoved(data.import);
        } catch (err) {
          show(problem, errorBox(err));
        }
      },
    });
    /** @type {HTMLLIElement} */
    const li = h(
      'li',
      { class: 'card', 'data-import': item.id },
      h('h3', {}, name),
      h('p', {}, `${t(`imports.${item.status}`)} · ${item.format}`),
      ...reportOf(item),
      item.reverted_at
        ? h(
            'p',
            { class: 'muted' },
            t('imports.reverted', { when: formatTime(item.reverted_at), count: formatNumber(item.removed, 0) }),
          )
        : null,
      h(
        'div',
        { class: 'row' },
        item.first_point_at
          ? h(
              'button',
              {
                type: 'button',
                class: 'secondary',
                'aria-label': `${t('imports.show')}: ${name}`,
                // (The track above may change its height: the entry is brought back into view.)
                onclick: () => onShow(item).then(() => li.scrollIntoView({ block: 'nearest' })),
              },
              t('imports.show'),
            )
          : null,
        !item.reverted_at && item.status !== 'running' && canRemove(item) ? remove : null,
      ),
    );
    return li;
  }

  /** @param {GpsImport} item */
  function replace(item) {
    items = [item, ...items.filter((other) => other.id !== item.id)]
      .sort((a, b) => b.created_at.localeCompare(a.created_at))
      .slice(0, SHOWN);
    render();
  }

  function render() {
    show(list, ...(items.length ? items.map(entry) : [h('li', { class: 'muted' }, t('imports.none'))]));
  }

  return {
    element,
    async load() {
      try {
        items = (await get(`/v1/gps/imports?limit=${SHOWN}`)).data;
        render();
      } catch (err) {
        show(problem, errorBox(err));
      }
    },
    /** An import finished here: at the top of the list. */
    add: replace,
  };
}
