// @ts-check
import { all, del, post } from '../api.js';
import { announce, errorBox, field, h, show } from '../dom.js';
import { formatDistance, formatPosition, t } from '../i18n.js';
import { createMap, L, removeMap } from '../map.js';

/**
 * Geofences as circles (GET /v1/geofences). With geofences:write (or geofences:write_own: one's own) a click on
 * the map places a new one; the form (labelled fields, also the keyboard way) saves it through POST /v1/geofences.
 * @param {HTMLElement} root
 * @param {import('../types/console').PageContext} context
 */
export async function mount(root, { config, canTrack }) {
  const problem = h('div');
  const list = h('ul');
  const mapElement = h('div', { class: 'map geofence-map' });
  const name = field(t('geofences.name'), { name: 'geofence-name', maxlength: 200, required: true });
  const lat = field(t('geofences.latitude'), {
    name: 'latitude',
    type: 'number',
    step: 'any',
    min: -90,
    max: 90,
    required: true,
  });
  const lon = field(t('geofences.longitude'), {
    name: 'longitude',
    type: 'number',
    step: 'any',
    min: -180,
    max: 180,
    required: true,
  });
  const radius = field(t('geofences.radius'), {
    name: 'radius',
    type: 'number',
    step: 'any',
    min: 0.01,
    value: '0.5',
    required: true,
  });
  const form = canTrack('geofences:write')
    ? h(
        'form',
        { class: 'card' },
        h('p', {}, t('geofences.intro')),
        h('div', { class: 'row' }, name.wrapper, lat.wrapper, lon.wrapper, radius.wrapper),
        h('button', { type: 'submit' }, t('geofences.create')),
      )
    : null;
  show(root, h('div', { class: 'page' }, h('h1', {}, t('geofences.title')), problem, form, mapElement, list));
  const map = createMap(mapElement, config, t('geofences.map'));
  const renderer = L.canvas();
  /** @type {L.Circle | undefined} */
  let draft;

  const drawDraft = () => {
    /** @type {L.LatLngTuple} */
    const center = [Number(lat.input.value), Number(lon.input.value)];
    if (!lat.input.value || !lon.input.value || Number.isNaN(center[0]) || Number.isNaN(center[1])) return;
    draft?.remove();
    draft = L.circle(center, { radius: Number(radius.input.value || 0.5) * 1000, renderer, dashArray: '6 6' }).addTo(
      map,
    );
  };
  if (form) {
    map.on('click', (event) => {
      lat.input.value = event.latlng.lat.toFixed(6);
      lon.input.value = event.latlng.lng.toFixed(6);
      drawDraft();
      name.input.focus();
    });
    for (const input of [lat.input, lon.input, radius.input]) input.addEventListener('input', drawDraft);
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      try {
        const { data } = await post('/v1/geofences', {
          name: name.input.value.trim(),
          latitude: Number(lat.input.value),
          longitude: Number(lon.input.value),
          radius_km: Number(radius.input.value),
        });
        draft?.remove();
        draft = undefined;
        map.fitBounds(add(data).getBounds().pad(0.5), { animate: false });
        form.reset();
        radius.input.value = '0.5';
        show(problem);
        announce(data.name);
      } catch (err) {
        show(problem, errorBox(err));
      }
    });
  }

  /** @typedef {import('../types/routes').Schema<'Geofence'>} Geofence */
  /** @param {Geofence} fence */
  function describe(fence) {
    return `${fence.name} · ${formatPosition(fence.latitude, fence.longitude)} · ${formatDistance(fence.radius_km * 1000, 2)}`;
  }

  /** @param {Geofence} fence */
  function add(fence) {
    const circle = L.circle([fence.latitude, fence.longitude], { radius: fence.radius_km * 1000, renderer })
      .addTo(map)
      // An element, not the name: Leaflet parses a string as HTML.
      .bindTooltip(h('span', {}, fence.name));
    const label = h('span', {}, describe(fence));
    const item = h(
      'li',
      {},
      h('button', { type: 'button', class: 'secondary', onclick: () => map.fitBounds(circle.getBounds()) }, label),
      canTrack('geofences:delete')
        ? [
            ' ',
            h(
              'button',
              {
                type: 'button',
                class: 'danger',
                'aria-label': `${t('delete')}: ${fence.name}`,
                onclick: async () => {
                  try {
                    await del(`/v1/geofences/${fence.id}`);
                    circle.remove();
                    item.remove();
                  } catch (err) {
                    show(problem, errorBox(err));
                  }
                },
              },
              t('delete'),
            ),
          ]
        : null,
    );
    list.append(item);

    return circle;
  }

  try {
    const fences = await all('/v1/geofences');
    const circles = fences.map(add);
    if (circles.length) map.fitBounds(L.featureGroup(circles).getBounds().pad(0.2), { animate: false });
  } catch (err) {
    show(problem, errorBox(err));
  }
  return () => removeMap(map);
}
