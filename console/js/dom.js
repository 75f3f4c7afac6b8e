/**
 * Builds elements without HTML strings, so text from the API is never parsed as markup:
 * h('button', { type: 'button', onclick }, 'Save'). Attributes starting with "on" become listeners.
 */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on')) element.addEventListener(name.slice(2), value);
    else if (name === 'text') element.textContent = value;
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  append(element, children);
  return element;
}

export function append(element, children) {
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : String(child));
  }
  return element;
}

/** Replaces what an element shows. */
export function show(element, ...children) {
  element.replaceChildren();
  return append(element, children);
}

/** A labelled field: the label names the input for screen readers through for/id. */
let fieldCounter = 0;
export function field(label, attributes = {}) {
  const id = attributes.id ?? `f${++fieldCounter}`;
  const input = h(attributes.tag ?? 'input', { ...attributes, tag: undefined, id });
  return { wrapper: h('div', {}, h('label', { for: id }, label), input), input };
}

/** Announces a message to screen readers (the page's live region). */
export function announce(message) {
  const status = document.getElementById('status');
  if (status) status.textContent = message;
}

export const errorBox = (message) => h('p', { class: 'error', role: 'alert' }, message);

/**
 * A button for what cannot be undone: the first click turns it into its confirmation ("Really …"), the
 * second runs `action`. `name` (a user, a key) goes into its accessible name, so each row's button is found.
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
