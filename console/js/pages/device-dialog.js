// @ts-check
import { del, patch, post } from '../api.js';
import { announce, confirmingButton, errorBox, field, h, show } from '../dom.js';
import { kmhFrom, speedIn, speedUnit, t } from '../i18n.js';
import { reauthField } from '../reauth.js';
import { qrFor, settingsFor } from './connect.js';

/** @typedef {import('../types/routes').Schema<'Device'>} Device */
/** @typedef {Device['icon']} Icon */

/** The icons a device may have (PATCH /v1/devices/{id} `icon`) and their names, in the order the dialog offers them. */
const ICONS = /** @type {const} */ ([
  ['generic', 'device.iconGeneric'],
  ['car', 'device.iconCar'],
  ['van', 'device.iconVan'],
  ['boat', 'device.iconBoat'],
  ['person', 'device.iconPerson'],
  ['bike', 'device.iconBike'],
]);

/**
 * Whether the user may change a device (their own with devices:write_own, any with devices:write) or delete it
 * (devices:delete_own, devices:delete), as the API decides.
 * @param {Device} device
 * @param {{ userId: string | null }} me
 * @param {(permission: string) => boolean} can
 * @param {'write' | 'delete'} what
 */
export function mayChange(device, me, can, what = 'write') {
  const own = Boolean(me.userId) && device.owner_id === me.userId;
  return can(`devices:${what}`) || (own && can(`devices:${what}_own`));
}

/**
 * The dialog of a device the user may change, opened from the map's list or the device's popup: its name,
 * description, colour, icon and whether it is active (PATCH /v1/devices/{id}); a new API key for it, the old one
 * revoked at once (POST /v1/devices/{id}/key), shown once with the apps' settings as Connect a device shows them;
 * and deleting it (DELETE, after saying what becomes of its points and its key). A modal <dialog>: focus stays in
 * it, Escape closes it, and the button that opened it has the focus again.
 * @param {Device} device
 * @param {{ me: { userId: string | null }, can: (permission: string) => boolean, publicUrl: string, opener?: () => HTMLElement | null | undefined, onChanged: (device: Device) => void, onDeleted: (id: string) => void }} options
 */
export function openDeviceDialog(device, { me, can, publicUrl, opener, onChanged, onDeleted }) {
  const problem = h('div');
  const close = h('button', { type: 'button', class: 'secondary' }, t('share.close'));
  const title = h('h2', { id: 'device-dialog-title' }, device.name);
  const details = detailsForm(device, {
    problem,
    onSaved: (saved) => {
      device = saved;
      title.textContent = saved.name;
      // The buttons that ask once more name the device: made anew with its new name (a key shown stays).
      if (!keyShown) keyPart.replaceWith((keyPart = keySection()));
      deletePart?.replaceWith((deletePart = deleteSection()));
      onChanged(saved);
    },
  });
  /** @type {string | undefined} the QR code's blob URL, once a new key is shown */
  let qrUrl;
  /** Whether a new key is shown (it stays, whatever else changes) */
  let keyShown = false;
  let keyPart = keySection();
  let deletePart = mayChange(device, me, can, 'delete') ? deleteSection() : null;
  const dialog = h(
    'dialog',
    { class: 'device-dialog', 'aria-labelledby': 'device-dialog-title' },
    h('div', { class: 'dialog-head' }, title, close),
    problem,
    details.form,
    keyPart,
    deletePart,
  );
  close.addEventListener('click', () => dialog.close());
  dialog.addEventListener('close', () => {
    if (qrUrl) URL.revokeObjectURL(qrUrl);
    dialog.remove();
    opener?.()?.focus();
  });
  document.body.append(dialog);
  dialog.showModal();
  details.focus();

  /**
   * A new key for the device: the old one stops working at once, so the second click is what makes it. The new key
   * is shown once, with the settings of each app (Connect a device's view), in place of the button.
   */
  function keySection() {
    const password = reauthField();
    const result = h('div');
    const button = confirmingButton({
      label: t('device.replaceKey'),
      confirmLabel: t('device.replaceConfirm'),
      name: device.name,
      action: async () => {
        button.disabled = true;
        show(problem);
        try {
          const made = await post(`/v1/devices/${device.id}/key`, password.body());
          password.clear();
          device = made.device;
          onChanged(made.device);
          const settings = settingsFor({ base: publicUrl, key: made.key, device: made.device });
          // The dialog's title names the device already; the new key's words get the focus, which shows them.
          settings.element.querySelector('h2')?.remove();
          show(result, settings.element);
          keyShown = true;
          intro.textContent = t('device.keyReplaced', { name: made.device.name });
          intro.setAttribute('tabindex', '-1');
          intro.focus({ preventScroll: true });
          // Scrolled within the dialog only: scrollIntoView would scroll the map behind it too.
          dialog.scrollTop = section.offsetTop;
          button.remove();
          password.wrapper.remove();
          qrUrl = await qrFor(settings.owntracksLink, settings.qr);
          announce(t('device.keyReplaced', { name: made.device.name }));
        } catch (err) {
          show(problem, errorBox(password.asked(err) ?? err));
        } finally {
          button.disabled = false;
        }
      },
    });
    const intro = h('p', {}, t(device.api_key_id ? 'device.keyNow' : 'device.keyNone'));
    const section = h(
      'section',
      { class: 'card device-key', 'aria-labelledby': 'device-key-title' },
      h('h3', { id: 'device-key-title' }, t('device.key')),
      intro,
      password.wrapper,
      button,
      result,
    );
    return section;
  }

  /** Deleting the device: what becomes of its points and its key is said before the button. */
  function deleteSection() {
    const button = confirmingButton({
      label: t('device.delete'),
      confirmLabel: t('device.deleteConfirm'),
      name: device.name,
      action: async () => {
        try {
          await del(`/v1/devices/${device.id}`);
          announce(t('device.deleted', { name: device.name }));
          onDeleted(device.id);
          opener = undefined;
          dialog.close();
        } catch (err) {
          show(problem, errorBox(err));
        }
      },
    });
    return h(
      'section',
      { class: 'card', 'aria-labelledby': 'device-delete-title' },
      h('h3', { id: 'device-delete-title' }, t('device.delete')),
      h('p', {}, t('device.deleteWhat')),
      button,
    );
  }
}

/**
 * The device's name, description, colour (its own, or none: the console picks one), icon, the settings of its events
 * (offline after how many minutes, speed limit) and whether it is active.
 * @param {Device} device
 * @param {{ problem: HTMLElement, onSaved: (device: Device) => void }} options
 */
function detailsForm(device, { problem, onSaved }) {
  const name = field(t('device.name'), {
    name: 'name',
    required: true,
    maxlength: 200,
    autocomplete: 'off',
    value: device.name,
  });
  const description = field(t('device.description'), { tag: 'textarea', name: 'description', maxlength: 1000 });
  description.input.value = device.description ?? '';
  const automatic = h('input', { type: 'checkbox', id: 'device-auto-color', checked: device.color === null });
  const color = field(t('device.color'), { type: 'color', name: 'color', value: device.color ?? '#1a5fb4' });
  const icon = field(t('device.icon'), { tag: 'select', name: 'icon' });
  for (const [value, label] of ICONS)
    icon.input.append(h('option', { value, selected: value === device.icon }, t(label)));
  // The events' settings (docs/events.md): empty is none. The limit in the user's speed unit, sent in km/h.
  const offline = field(t('device.offlineAfter'), {
    type: 'number',
    name: 'offline_after_minutes',
    min: 1,
    max: 43_200,
    step: 1,
    inputmode: 'numeric',
    value: device.offline_after_minutes === null ? '' : String(device.offline_after_minutes),
  });
  const limit = field(t('device.speedLimit', { unit: speedUnit() }), {
    type: 'number',
    name: 'speed_limit',
    min: 1,
    step: 'any',
    inputmode: 'decimal',
    value: device.speed_limit_kmh === null ? '' : String(Math.round(speedIn(device.speed_limit_kmh) * 10) / 10),
  });
  const active = h('input', {
    type: 'checkbox',
    id: 'device-active',
    checked: device.is_active,
    'aria-describedby': 'device-active-hint',
  });
  const showColor = () => {
    color.input.disabled = automatic.checked;
  };
  automatic.addEventListener('change', showColor);
  showColor();
  const submit = h('button', { type: 'submit' }, t('save'));
  const form = h(
    'form',
    { class: 'card device-details', 'aria-labelledby': 'device-details-title' },
    h('h3', { id: 'device-details-title' }, t('device.details')),
    name.wrapper,
    description.wrapper,
    h(
      'div',
      { class: 'row' },
      icon.wrapper,
      h(
        'div',
        { class: 'color-choice' },
        color.wrapper,
        h('label', { for: automatic.id, class: 'check' }, automatic, ` ${t('device.autoColor')}`),
      ),
    ),
    h('div', { class: 'row' }, offline.wrapper, limit.wrapper),
    h('p', { class: 'muted hint' }, t('device.eventsHint')),
    h('label', { for: active.id, class: 'check' }, active, ` ${t('device.active')}`),
    h('p', { id: 'device-active-hint', class: 'muted hint' }, t('device.activeHint')),
    submit,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const newName = name.input.value.trim();
    if (!newName) return name.input.focus();
    submit.disabled = true;
    show(problem);
    try {
      const { data } = await patch(`/v1/devices/${device.id}`, {
        name: newName,
        description: description.input.value.trim() || null,
        color: automatic.checked ? null : color.input.value,
        icon: /** @type {Icon} */ (icon.input.value),
        is_active: active.checked,
        offline_after_minutes: offline.input.value ? Number(offline.input.value) : null,
        speed_limit_kmh: limit.input.value ? kmhFrom(Number(limit.input.value)) : null,
      });
      device = data;
      onSaved(data);
      announce(t('device.saved', { name: data.name }));
    } catch (err) {
      show(problem, errorBox(err));
    } finally {
      submit.disabled = false;
    }
  });
  return { form, focus: () => name.input.focus() };
}
