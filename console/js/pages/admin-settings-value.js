// @ts-check
import { field, h } from '../dom.js';
import { formatNumber, t } from '../i18n.js';

/**
 * The part of a JSON Schema a config entry's `value_schema` uses (src/operations/settings/config-values.ts).
 * @typedef {{ type?: string, minimum?: number, maximum?: number, anyOf?: ValueSchema[] }} ValueSchema
 */

/**
 * The field a value is edited in, from the JSON Schema of the values its entry takes: a checkbox for a boolean,
 * a number within its limits for an integer (left empty for null, where null is allowed), else the value as JSON
 * text. `read` gives the value to save; for JSON text that is not JSON, it throws a message naming the key.
 * @param {{ key: string, value?: unknown, value_schema?: unknown }} entry
 * @returns {{ element: HTMLElement, read: () => unknown }}
 */
export function valueEditor(entry) {
  const schema = /** @type {ValueSchema | null} */ (entry.value_schema ?? null);
  const options = schema?.anyOf ?? (schema ? [schema] : []);
  const nullable = options.some((option) => option.type === 'null');
  const [only, ...others] = options.filter((option) => option.type !== 'null');
  if (only?.type === 'boolean' && !others.length && !nullable) return checkbox(entry);
  if (only?.type === 'integer' && !others.length) return integer(entry, only, nullable);
  return json(entry);
}

/** @param {{ key: string, value?: unknown }} entry */
function checkbox({ key, value }) {
  const input = h('input', {
    type: 'checkbox',
    name: 'value',
    checked: value === true,
    'aria-label': `${key}: ${t('settings.on')}`,
  });
  return { element: h('label', { class: 'scope' }, input, ` ${t('settings.on')}`), read: () => input.checked };
}

/**
 * @param {{ key: string, value?: unknown }} entry
 * @param {ValueSchema} limits
 * @param {boolean} nullable
 */
function integer({ key, value }, { minimum, maximum }, nullable) {
  const { wrapper, input } = field(t('settings.valueOfKey', { key }), {
    name: 'value',
    type: 'number',
    inputmode: 'numeric',
    step: 1,
    min: minimum,
    max: maximum,
    required: !nullable,
    value: typeof value === 'number' ? value : '',
  });
  wrapper.querySelector('label')?.classList.add('visually-hidden');
  const range = { min: formatNumber(minimum ?? -Infinity), max: formatNumber(maximum ?? Infinity) };
  const hint = h(
    'p',
    { class: 'muted hint', id: `${input.id}-hint` },
    t(nullable ? 'settings.rangeOrEmpty' : 'settings.range', range),
  );
  input.setAttribute('aria-describedby', hint.id);
  wrapper.append(hint);
  return { element: wrapper, read: () => (input.value === '' ? null : Number(input.value)) };
}

/** @param {{ key: string, value?: unknown }} entry */
function json({ key, value }) {
  const { wrapper, input } = field(t('settings.valueOf', { key }), {
    name: 'value',
    value: JSON.stringify(value),
    spellcheck: 'false',
    autocomplete: 'off',
  });
  wrapper.querySelector('label')?.classList.add('visually-hidden');
  return { element: wrapper, read: () => parseJson(input.value, key) };
}

/**
 * JSON typed into a field, or an error naming the key (text needs quotes).
 * @param {string} text
 * @param {string} key
 */
export function parseJson(text, key) {
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(t('settings.notJson', { key }));
  }
}
