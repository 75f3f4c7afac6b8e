// @ts-check
/**
 * Where each tracker app sends its points: the one source of the addresses and of GPSLogger's URL that the
 * Connect page shows and docs/gps.md documents (src/operations/console/trackers.test.ts holds the docs to it and
 * replays GPSLogger's request built from it). GPSLogger fills `%SPD` in metres per second, so it goes into
 * `speed_mps`: the OsmAnd route reads `speed` as knots, Traccar's unit, and would store half the speed.
 */
export const INGEST_PATHS = {
  traccar: '/v1/ingest/osmand',
  owntracks: '/v1/ingest/owntracks',
  overland: '/v1/ingest/overland',
};

/** The OsmAnd parameters GPSLogger's custom URL fills, and its placeholder for each (GPSLogger's units). */
export const GPSLOGGER_PARAMETERS = [
  ['lat', '%LAT'],
  ['lon', '%LON'],
  ['timestamp', '%TIMESTAMP'],
  ['altitude', '%ALT'],
  ['accuracy', '%ACC'],
  ['bearing', '%DIR'],
  ['speed_mps', '%SPD'],
  ['batt', '%BATT'],
  ['charge', '%ISCHARGING'],
  ['hdop', '%HDOP'],
];

/** Each app's address on the service at `base` (https://gps.example.org, no trailing slash). */
export function ingestUrls(base) {
  return Object.fromEntries(Object.entries(INGEST_PATHS).map(([app, path]) => [app, `${base}${path}`]));
}

/** GPSLogger's custom URL (method GET) with the API key `key` in it. */
export function gpsloggerUrl(base, key) {
  return `${ingestUrls(base).traccar}?key=${encodeURIComponent(key)}&${GPSLOGGER_PARAMETERS.map(([name, placeholder]) => `${name}=${placeholder}`).join('&')}`;
}
