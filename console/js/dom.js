// @ts-check
/** @typedef {import('./types/console').Attributes} Attributes */
/** @typedef {import('./types/console').Child} Child */

/**
 * Builds elements without HTML strings, so text from the API is never parsed as markup:
 * h('button', { type: 'button', onclick }, 'Save'). Attributes starting with "on" become listeners.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Attributes | null} [attributes]
 * @param {Child[]} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on')) element.addEventListener(name.slice(2), /** @type {EventListener} */ (value));
    else if (name === 'text') element.textContent = String(value);
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  append(element, children);
  return element;
}

/**
 * @template {Element} E
 * @param {E} element
 * @param {Child[]} children
 * @returns {E}
 */
export function append(element, children) {
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : String(child));
  }
  return element;
}

/**
 * Replaces what an element shows.
 * @template {Element} E
 * @param {E} element
 * @param {Child[]} children
 * @returns {E}
 */
export function show(element, ...children) {
  element.replaceChildren();
  return append(element, children);
}

let fieldCounter = 0;
/**
 * A labelled field: the label names the input for screen readers through for/id. `tag` picks a select or a textarea.
 * @template {'input' | 'select' | 'textarea'} [K='input']
 * @param {string} label
 * @param {Attributes & { tag?: K, id?: string }} [attributes]
 * @returns {{ wrapper: HTMLDivElement, input: HTMLElementTagNameMap[K] }}
 */
export function field(label, attributes = {}) {
  const id = attributes.id ?? `f${++fieldCounter}`;
  const input = h(/** @type {K} */ (attributes.tag ?? 'input'), { ...attributes, tag: undefined, id });
  return { wrapper: h('div', {}, h('label', { for: id }, label), input), input };
}

/**
 * A problem shown at its field: the text right below the input, which is marked invalid and described by it (a
 * screen reader reads the problem with the field). Without `message`, the field's problem is taken away.
 * @param {HTMLElement} input
 * @param {string} [message]
 */
export function fieldProblem(input, message) {
  const id = `${input.id}-problem`;
  input.parentElement?.querySelector(`[id="${id}"]`)?.remove();
  if (!message) {
    input.removeAttribute('aria-invalid');
    input.removeAttribute('aria-describedby');
    return;
  }
  input.setAttribute('aria-invalid', 'true');
  input.setAttribute('aria-describedby', id);
  input.after(h('p', { class: 'field-problem', id, role: 'alert' }, message));
}

/**
 * Announces a message to screen readers (the page's live region).
 * @param {string} message
 */
export function announce(message) {
  const status = document.getElementById('status');
  if (status) status.textContent = message;
}

/**
 * What went wrong, in words: an error's message (the API's, for an ApiError), or the text itself.
 * @param {unknown} problem
 */
export const messageOf = (problem) => (problem instanceof Error ? problem.message : String(problem));

/**
 * A problem shown as an alert: a text, or an error's message.
 * @param {unknown} problem
 */
export const errorBox = (problem) => h('p', { class: 'error', role: 'alert' }, messageOf(problem));

/**
 * A button for what cannot be undone: the first click turns it into its confirmation ("Really …"), the
 * second runs `action`. `name` (a user, a key) goes into its accessible name, so each row's button is found.
 * @param {{ label: string, confirmLabel: string, name: string, action: (event: MouseEvent) => unknown, type?: 'button' | 'submit' }} options
 */
export function confirmingButton({ label, confirmLabel, name, action, type = 'button' }) {
  const button = h('button', { type, class: 'danger', 'aria-label': `${label}: ${name}` }, label);
  button.addEventListener('click', (event) => {
    if (button.dataset.confirm) return action(event);
    event.preventDefault();
    button.dataset.confirm = 'yes';
    button.textContent = confirmLabel;
    button.setAttribute('aria-label', `${confirmLabel}: ${name}`);
  });
  return button;
}
