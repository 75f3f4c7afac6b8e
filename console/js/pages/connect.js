// @ts-check
import { post, session } from '../api.js';
import { announce, errorBox, field, h, show } from '../dom.js';
import { t } from '../i18n.js';
import { reauthField } from '../reauth.js';
import { gpsloggerUrl, ingestUrls } from '../trackers.js';

/**
 * Connect a device: one API key that may only write GPS points (POST /v1/api-keys, scopes
 * ['gps:write'], or ['gps:write_own'] for a user who tracks only their own devices: a key never exceeds its owner)
 * and a device linked to it (POST /v1/devices with api_key_id), so whatever the phone posts with the key lands on
 * that device, which belongs to the user. Then the settings for the common apps, with the key where
 * each app sends it: Traccar Client's device identifier (`id`), OwnTracks' HTTP Basic password,
 * Overland's Bearer token, GPSLogger's custom URL. The key is shown here once and kept nowhere.
 * @param {HTMLElement} root
 * @param {import('../types/console').PageContext} context
 */
export async function mount(root, { config, can }) {
  const name = field(t('connect.name'), { name: 'device-name', required: true, maxlength: 100, autocomplete: 'off' });
  const problem = h('div');
  const submit = h('button', { type: 'submit' }, t('connect.submit'));
  const result = h('div');
  const password = reauthField();
  const form = h('form', { class: 'card' }, problem, name.wrapper, password.wrapper, submit);
  show(
    root,
    h('div', { class: 'page' }, h('h1', {}, t('connect.title')), h('p', {}, t('connect.intro')), form, result),
  );
  name.input.focus();

  /** @type {string | undefined} */
  let qrUrl;
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const deviceName = name.input.value.trim();
    if (!deviceName) return name.input.focus();
    submit.disabled = true;
    show(problem);
    try {
      const key = await post('/v1/api-keys', {
        name: `Device: ${deviceName}`.slice(0, 100),
        scopes: [can('gps:write') ? 'gps:write' : 'gps:write_own'],
        ...password.body(),
      });
      password.clear();
      const { data: device } = await post('/v1/devices', { name: deviceName, api_key_id: key.id });
      const settings = settingsFor({ base: config.publicUrl, key: key.key, device });
      show(result, settings.element);
      form.hidden = true;
      qrUrl = await qrFor(settings.owntracksLink, settings.qr);
      settings.element.querySelector('h2')?.focus();
      announce(t('connect.keyOnce'));
    } catch (err) {
      show(problem, errorBox(password.asked(err) ?? err));
    } finally {
      submit.disabled = false;
    }
  });
  return () => {
    if (qrUrl) URL.revokeObjectURL(qrUrl);
  };
}

/**
 * The settings of each app for the new device, and the OwnTracks link its QR code holds.
 * @param {{ base: string, key: string, device: import('../types/routes').Schema<'Device'> }} created
 */
export function settingsFor({ base, key, device }) {
  const urls = ingestUrls(base);
  const owntracks = {
    _type: 'configuration',
    mode: 3,
    url: urls.owntracks,
    auth: true,
    username: device.name.replace(/\s+/g, '-').toLowerCase().slice(0, 30) || 'device',
    password: key,
    deviceId: device.id.slice(0, 8),
    tid: device.name.slice(0, 2).toUpperCase(),
  };
  const bytes = new TextEncoder().encode(JSON.stringify(owntracks));
  const owntracksLink = `owntracks:///config?inline=${encodeURIComponent(btoa(String.fromCharCode(...bytes)))}`;
  const gpslogger = gpsloggerUrl(base, key);
  const qr = h('img', { class: 'qr', alt: t('connect.qr'), width: 192, height: 192 });

  /** @param {string} value @param {string} label */
  const copyable = (value, label) => {
    const button = h(
      'button',
      { type: 'button', class: 'secondary', 'aria-label': `${t('connect.copy')}: ${label}` },
      t('connect.copy'),
    );
    button.addEventListener('click', async () => {
      await navigator.clipboard?.writeText(value).catch(() => {});
      announce(t('connect.copied'));
    });
    return [h('code', {}, value), ' ', button];
  };
  /**
   * An app's settings: rows of label, value and whether it gets a copy button.
   * @param {string} title
   * @param {[label: string, value: string, copy?: boolean][]} rows
   * @param {HTMLElement[]} extra
   */
  const app = (title, rows, ...extra) =>
    h(
      'section',
      { class: 'card', 'aria-label': title },
      h('h3', {}, title),
      h(
        'dl',
        { class: 'settings' },
        ...rows.flatMap(([label, value, copy]) => [
          h('dt', {}, label),
          h('dd', {}, ...(copy ? copyable(value, `${title}, ${label}`) : [value])),
        ]),
      ),
      ...extra,
    );

  const element = h(
    'div',
    {},
    h('h2', { tabindex: '-1' }, device.name),
    h('p', { class: 'ok', role: 'status' }, t('connect.keyOnce')),
    h(
      'dl',
      { class: 'settings card' },
      h('dt', {}, t('connect.key')),
      h('dd', { id: 'device-key' }, ...copyable(key, t('connect.key'))),
    ),
    h(
      'div',
      { class: 'apps' },
      app(t('connect.traccar'), [
        [t('connect.url'), urls.traccar, true],
        [t('connect.identifier'), key, true],
      ]),
      app(
        t('connect.owntracks'),
        [
          [t('connect.mode'), 'HTTP'],
          [t('connect.url'), urls.owntracks, true],
          [t('connect.username'), owntracks.username],
          [t('connect.password'), key, true],
        ],
        h('p', {}, t('connect.qr')),
        qr,
        h('p', {}, h('a', { href: owntracksLink }, t('connect.openLink'))),
      ),
      app(t('connect.overland'), [
        [t('connect.endpoint'), urls.overland, true],
        [t('connect.token'), key, true],
      ]),
      app(t('connect.gpslogger'), [
        [t('connect.customUrl'), gpslogger, true],
        [t('connect.method'), 'GET'],
      ]),
    ),
    h('p', { class: 'muted' }, t('connect.otherHint')),
  );
  return { element, owntracksLink, qr };
}

/**
 * The QR code as SVG from the service (POST /console/qr, the signed-in user's session), shown through a blob URL.
 * @param {string} text
 * @param {HTMLImageElement} img
 */
export async function qrFor(text, img) {
  const response = await fetch('/console/qr', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${session.token}` },
    body: JSON.stringify({ text }),
  });
  if (!response.ok) return undefined;
  const url = URL.createObjectURL(await response.blob());
  img.src = url;
  return url;
}
