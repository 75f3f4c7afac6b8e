// @ts-check
import { download, fetchRaw, get, post } from './api.js';
import { announce, errorBox, field, h, show } from './dom.js';
import { formatNumber, formatTime, t } from './i18n.js';

/** @typedef {import('./types/routes').Schema<'Device'>} Device */
/** @typedef {import('./types/routes').Schema<'GpsImport'>} GpsImport */

const FORMATS = ['gpx', 'geojson', 'kml', 'kmz', 'tcx', 'csv', 'owntracks', 'takeout'];
const POLL_MS = 500;

/**
 * Import a GPS file into a device: the file is the body of POST /v1/gps/import (streamed by the browser,
 * never read into the page), then the import's record (GET /v1/gps/imports/{id}) is read twice a second
 * while it runs (it is a job on the server, not a live position) for its progress and final report.
 * The form names the device the points go to and says so beside it; a user without one (or who wants
 * another) gets a new device of their own made first, when they may make devices, else is told what to do,
 * so an import never fails for want of a device.
 * @param {{ canCreate: boolean, onDevice: (device: Device) => void, onDone: (done: GpsImport) => Promise<void> }} options
 *   whether a device may be made for the import; what to do with one made; what to do with a finished import (its
 *   report is scrolled into view when that is done)
 */
export function importForm({ canCreate, onDevice, onDone }) {
  const into = field(t('import.into'), { tag: 'select', name: 'into' });
  const intoHint = h('p', { class: 'muted', id: `${into.input.id}-hint` });
  into.input.setAttribute('aria-describedby', intoHint.id);
  const newName = field(t('import.newName'), { name: 'new-device', maxlength: 100, value: t('import.newNameDefault') });
  const file = field(t('import.file'), {
    name: 'file',
    type: 'file',
    required: true,
    accept: '.gpx,.geojson,.json,.kml,.kmz,.tcx,.csv,.rec,application/gpx+xml,application/geo+json',
  });
  const format = field(t('import.format'), { tag: 'select', name: 'format' });
  format.input.append(
    h('option', { value: '' }, t('import.detect')),
    ...FORMATS.map((name) => h('option', { value: name }, name)),
  );
  const problem = h('div');
  const report = h('div', { role: 'status', class: 'import-report' });
  const submit = h('button', { type: 'submit' }, t('import.submit'));
  const form = h('form', { class: 'row' }, newName.wrapper, file.wrapper, format.wrapper, submit);
  const newOption = canCreate ? h('option', { value: '' }, t('import.newDevice')) : null;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;

  /** What the chosen target means, said beside it; the new device's name only when one is made. */
  function explain() {
    const chosen = into.input.selectedOptions[0];
    const none = !chosen;
    newName.wrapper.hidden = none || chosen !== newOption;
    newName.input.required = !newName.wrapper.hidden;
    form.hidden = none;
    into.wrapper.hidden = none;
    intoHint.textContent = none
      ? t('import.needsDevice')
      : chosen === newOption
        ? t('import.intoNew')
        : t('import.intoDevice', { name: chosen.textContent ?? '' });
  }
  into.input.addEventListener('change', explain);

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const chosen = file.input.files?.[0];
    if (!chosen) return;
    show(problem);
    submit.disabled = true;
    try {
      if (into.input.selectedOptions[0] === newOption) {
        const { data: device } = await post('/v1/devices', { name: newName.input.value.trim() });
        onDevice(device);
        into.input.add(h('option', { value: device.id }, device.name), newOption);
        into.input.value = device.id;
        explain();
      }
      const query = new URLSearchParams({
        device_id: into.input.value,
        ...(format.input.value ? { format: format.input.value } : {}),
      });
      /** @type {import('./types/routes').Answer<'post', '/v1/gps/import'>} */
      const { data } = await (await fetchRaw('POST', `/v1/gps/import?${query}`, chosen)).json();
      follow(data.id, chosen.name);
    } catch (err) {
      show(problem, errorBox(err));
      submit.disabled = false;
    }
  });

  /**
   * @param {string} id the import's
   * @param {string} name the file's
   */
  function follow(id, name) {
    clearTimeout(timer);
    const step = async () => {
      try {
        const { data } = await get(`/v1/gps/imports/${id}`);
        show(report, h('p', {}, statusOf(data, name)), ...reportOf(data));
        if (data.status === 'running' && form.isConnected) timer = setTimeout(step, POLL_MS);
        else {
          submit.disabled = false;
          announce(statusOf(data, name));
          if (data.status === 'done') await onDone(data);
          report.scrollIntoView({ block: 'nearest' });
        }
      } catch (err) {
        show(problem, errorBox(err));
        submit.disabled = false;
      }
    };
    step();
  }

  // The target and why sit outside the form: with nothing to import into, only the why stays.
  const element = h(
    'details',
    { class: 'import' },
    h('summary', {}, t('import.title')),
    h('p', { class: 'muted' }, t('import.hint')),
    into.wrapper,
    intoHint,
    problem,
    form,
    report,
  );
  return {
    element,
    /**
     * The devices the user may import into, and the one History shows (chosen when among them; else the first,
     * or a new device).
     * @param {Device[]} devices
     * @param {string} shown
     */
    setDevices(devices, shown) {
      show(into.input, ...devices.map((d) => h('option', { value: d.id }, d.name)), newOption);
      into.input.value = devices.some((d) => d.id === shown) ? shown : (devices[0]?.id ?? '');
      explain();
    },
    /** History shows another device: imports go there too, when they may. @param {string} id */
    choose(id) {
      if ([...into.input.options].some((option) => option.value === id && option !== newOption)) {
        into.input.value = id;
        explain();
      }
    },
    /** Opens the form and puts the focus in it (arriving from the first run's "Import history"). */
    open() {
      element.open = true;
      element.scrollIntoView({ block: 'nearest' });
      (form.hidden ? into.input : file.input).focus();
    },
  };
}

/**
 * An import's state in a sentence, with the file's name when known.
 * @param {GpsImport} data
 * @param {string} name
 */
const statusOf = (data, name) => t(`import.${data.status}`, { name, count: formatNumber(data.imported, 0) });

/**
 * An import's report: counts, the time its points span, its error, the first refusals and notes.
 * @param {GpsImport} data
 * @returns {import('./types/console').Child[]}
 */
export function reportOf(data) {
  const total = data.bytes_total ?? 0;
  return [
    data.status === 'running'
      ? h('progress', { max: total || 1, value: data.bytes_read, 'aria-label': t('import.progress') })
      : null,
    h(
      'p',
      { class: 'muted' },
      t('import.counts', {
        imported: formatNumber(data.imported, 0),
        duplicates: formatNumber(data.duplicates, 0),
        refused: formatNumber(data.refused_count, 0),
      }),
    ),
    data.first_point_at && data.last_point_at
      ? h(
          'p',
          { class: 'muted' },
          t('import.span', { from: formatTime(data.first_point_at), to: formatTime(data.last_point_at) }),
        )
      : null,
    data.error ? errorBox(`${data.error.code}: ${data.error.message}`) : null,
    data.refused.length
      ? h(
          'details',
          {},
          h('summary', {}, t('import.refused', { count: data.refused_count })),
          h('ul', {}, ...data.refused.slice(0, 20).map((item) => h('li', {}, `${item.at}: ${item.reason}`))),
        )
      : null,
    data.notes.length
      ? h(
          'details',
          {},
          h('summary', {}, t('import.notes', { count: data.notes_count })),
          h('ul', {}, ...data.notes.slice(0, 20).map((item) => h('li', {}, `${item.at}: ${item.note}`))),
        )
      : null,
  ];
}

const FORMAT_NAMES = { gpx: 'GPX', geojson: 'GeoJSON', csv: 'CSV' };

/**
 * Buttons that save an export (GPX, GeoJSON, CSV) of what `pathOf(format)` names; a refusal goes to `onError`.
 * @param {(format: string) => string} pathOf
 * @param {(err: unknown) => void} onError
 */
export function exportButtons(pathOf, onError) {
  return Object.entries(FORMAT_NAMES).map(([format, name]) =>
    h(
      'button',
      {
        type: 'button',
        class: 'secondary',
        onclick: () =>
          download(pathOf(format), `track.${format}`).then(
            (file) => announce(t('history.saved', { name: file })),
            onError,
          ),
      },
      t('history.download', { format: name }),
    ),
  );
}
