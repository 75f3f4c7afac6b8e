// @ts-check
import { formatDate, t } from './i18n.js';

/**
 * Shares in words, as the map's device list, the sharing dialog and the Groups page say them: the level with its
 * days ("history of 7 days") and the end ("until 31/12/2026"). A share with device_id null covers every device of
 * its owner, those added later too (docs/sharing.md).
 * @typedef {import('./types/routes').Schema<'DeviceShare'>} Share
 * @typedef {Share['level']} Level
 */

/** The levels from narrowest to widest, each with what it lets the grantee see (for a select's options). */
export const LEVELS = /** @type {const} */ ([
  ['live', 'share.levelLive'],
  ['history', 'share.levelHistory'],
  ['full', 'share.levelFull'],
]);

/** @type {Record<Level, number>} */
const RANK = { live: 0, history: 1, full: 2 };

/**
 * The level in words, with its days where it has any ("history of 7 days").
 * @param {Pick<Share, 'level' | 'history_days'>} share
 */
export function levelText({ level, history_days: days }) {
  if (level === 'live') return t('share.live');
  if (level === 'history') return days ? t('share.historyDays', { days }) : t('share.history');
  return days ? t('share.fullDays', { days }) : t('share.full');
}

/**
 * The level and, when the share ends, when: "history of 7 days, until 31/12/2026".
 * @param {Pick<Share, 'level' | 'history_days' | 'expires_at'>} share
 */
export const shareText = (share) =>
  share.expires_at
    ? t('share.levelUntil', { level: levelText(share), date: formatDate(share.expires_at) })
    : levelText(share);

/**
 * Of the shares that reach one device (directly, for all the owner's devices, through a group), the one that counts:
 * the widest level; among equals the longer history, then the later end.
 * @param {Share[]} shares
 * @returns {Share | undefined}
 */
export function widest(shares) {
  /** @param {Share} share */
  const days = (share) => share.history_days ?? Infinity;
  /** @param {Share} share */
  const end = (share) => (share.expires_at ? Date.parse(share.expires_at) : Infinity);
  return [...shares].sort((a, b) => RANK[b.level] - RANK[a.level] || days(b) - days(a) || end(b) - end(a))[0];
}

/**
 * The share through which each device is seen, from GET /v1/shares?direction=incoming: a device's own share, or its
 * owner's share of every device.
 * @param {Share[]} incoming
 * @returns {(device: { id: string, owner_id: string | null }) => Share | undefined}
 */
export function incomingShareOf(incoming) {
  return (device) =>
    widest(
      incoming.filter(
        (share) => share.device_id === device.id || (share.device_id === null && share.owner_id === device.owner_id),
      ),
    );
}

/**
 * An end date as the date input shows it (the browser's time zone), and back: a share chosen to end on a day ends
 * at that day's last second there.
 * @param {string | null} iso
 */
export function dateValue(iso) {
  if (!iso) return '';
  const date = new Date(iso);
  const pad = (/** @type {number} */ value) => String(value).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}
/** @param {string} value a date input's value (YYYY-MM-DD), or empty for no end */
export const endOfDay = (value) => (value ? new Date(`${value}T23:59:59`).toISOString() : null);
