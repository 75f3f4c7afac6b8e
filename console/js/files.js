// @ts-check
import { download, fetchRaw, get } from './api.js';
import { announce, errorBox, field, h, show } from './dom.js';
import { formatNumber, t } from './i18n.js';

const FORMATS = ['gpx', 'geojson', 'kml', 'csv', 'owntracks', 'takeout'];
const POLL_MS = 500;

/**
 * Import a GPS file into a device: the file is the body of POST /v1/gps/import (streamed by the browser,
 * never read into the page), then the import's record (GET /v1/gps/imports/{id}) is read twice a second
 * while it runs (it is a job on the server, not a live position) for its progress and final report.
 * @param {{ deviceOf: () => string, onDone?: () => void }} options the device to import into; what to do when done
 */
export function importForm({ deviceOf, onDone }) {
  const file = field(t('import.file'), {
    name: 'file',
    type: 'file',
    required: true,
    accept: '.gpx,.geojson,.json,.kml,.csv,.rec,application/gpx+xml,application/geo+json',
  });
  const format = field(t('import.format'), { tag: 'select', name: 'format' });
  format.input.append(
    h('option', { value: '' }, t('import.detect')),
    ...FORMATS.map((name) => h('option', { value: name }, name)),
  );
  const problem = h('div');
  const report = h('div', { role: 'status' });
  const submit = h('button', { type: 'submit' }, t('import.submit'));
  const form = h('form', { class: 'row' }, file.wrapper, format.wrapper, submit);
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const chosen = file.input.files?.[0];
    if (!chosen || !deviceOf()) return;
    show(problem);
    submit.disabled = true;
    try {
      const query = new URLSearchParams({
        device_id: deviceOf(),
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
        render(data, name);
        if (data.status === 'running' && form.isConnected) timer = setTimeout(step, POLL_MS);
        else {
          submit.disabled = false;
          announce(t(`import.${data.status}`, { name, count: formatNumber(data.imported, 0) }));
          if (data.status === 'done') onDone?.();
        }
      } catch (err) {
        show(problem, errorBox(err));
        submit.disabled = false;
      }
    };
    step();
  }

  /**
   * @param {import('./types/routes').Schema<'GpsImport'>} data
   * @param {string} name
   */
  function render(data, name) {
    const total = data.bytes_total ?? 0;
    const progressId = `import-progress-${data.id}`;
    show(
      report,
      h('p', { id: progressId }, t(`import.${data.status}`, { name, count: formatNumber(data.imported, 0) })),
      data.status === 'running'
        ? h('progress', { max: total || 1, value: data.bytes_read, 'aria-labelledby': progressId })
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
    );
  }

  return h(
    'details',
    { class: 'import' },
    h('summary', {}, t('import.title')),
    h('p', { class: 'muted' }, t('import.hint')),
    problem,
    form,
    report,
  );
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
