// @ts-check
import { patch } from '../api.js';
import { announce, errorBox, field, h, show } from '../dom.js';
import {
  currentPreferences,
  formatDistance,
  formatPosition,
  formatSpeed,
  formatTime,
  setPreferences,
  t,
} from '../i18n.js';

/** @typedef {import('../i18n.js').Preferences} Preferences */

/** A sample of each thing the preferences change, shown as the user chooses: speed, distance, time, position. */
const SAMPLE = { kmh: 18, metres: 12_400, latitude: 53.55012, longitude: 9.99301 };

/**
 * Units, time zone and coordinate format, kept on the account (PATCH /v1/users/me/preferences): every page shows
 * speeds, distances, times and coordinates this way. A line below the choices shows what they look like.
 */
export function preferencesSection() {
  const problem = h('div');
  const chosen = currentPreferences();
  /** @param {string} key @param {string} name @param {[string, string][]} options @param {string} selected */
  const select = (key, name, options, selected) => {
    const made = field(t(key), { tag: 'select', name });
    for (const [value, label] of options)
      made.input.append(h('option', { value, selected: value === selected }, label));
    return made;
  };
  const speed = select(
    'preferences.speed',
    'speed_unit',
    [
      ['kmh', t('preferences.kmh')],
      ['mph', t('preferences.mph')],
      ['knots', t('preferences.knots')],
    ],
    chosen.speed_unit,
  );
  const distance = select(
    'preferences.distance',
    'distance_unit',
    [
      ['km', t('preferences.km')],
      ['mi', t('preferences.mi')],
      ['nmi', t('preferences.nmi')],
    ],
    chosen.distance_unit,
  );
  const browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const zone = select(
    'preferences.timeZone',
    'time_zone',
    [
      ['', t('preferences.browserZone', { zone: browserZone })],
      ...Intl.supportedValuesOf('timeZone').map((name) => /** @type {[string, string]} */ ([name, name])),
    ],
    chosen.time_zone ?? '',
  );
  // A zone the server knows but this browser does not list still shows as chosen.
  if (chosen.time_zone && zone.input.value !== chosen.time_zone)
    zone.input.append(h('option', { value: chosen.time_zone, selected: true }, chosen.time_zone));
  const coordinates = select(
    'preferences.coordinates',
    'coordinate_format',
    [
      ['decimal', t('preferences.decimal')],
      ['dm', t('preferences.dm')],
      ['dms', t('preferences.dms')],
    ],
    chosen.coordinate_format,
  );
  const example = h('p', { class: 'muted', id: 'preferences-example', 'aria-live': 'polite' });

  /** @returns {Preferences} */
  const picked = () => ({
    speed_unit: /** @type {Preferences['speed_unit']} */ (speed.input.value),
    distance_unit: /** @type {Preferences['distance_unit']} */ (distance.input.value),
    time_zone: zone.input.value || null,
    coordinate_format: /** @type {Preferences['coordinate_format']} */ (coordinates.input.value),
  });
  /** Shows the sample in the picked preferences, leaving the page's own ones as they are until saved. */
  function preview() {
    const saved = currentPreferences();
    setPreferences(picked());
    example.textContent = t('preferences.example', {
      speed: formatSpeed(SAMPLE.kmh),
      distance: formatDistance(SAMPLE.metres),
      time: formatTime(Date.now()),
      position: formatPosition(SAMPLE.latitude, SAMPLE.longitude),
    });
    setPreferences(saved);
  }
  for (const input of [speed.input, distance.input, zone.input, coordinates.input])
    input.addEventListener('change', preview);
  preview();

  const form = h(
    'form',
    { class: 'card preferences', 'aria-labelledby': 'preferences-title' },
    h('h2', { id: 'preferences-title' }, t('preferences.title')),
    h('div', { class: 'grid' }, speed.wrapper, distance.wrapper, zone.wrapper, coordinates.wrapper),
    example,
    problem,
    h('button', { type: 'submit' }, t('preferences.save')),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    try {
      const answer = await patch('/v1/users/me/preferences', picked());
      setPreferences(answer.data);
      show(problem);
      announce(t('preferences.saved'));
    } catch (err) {
      show(problem, errorBox(err));
    }
  });
  return form;
}
