import { xmlText, type ExportPoint, type FormatWriter } from './types.js';

/** Our namespace for what GPX 1.1 has no element for (speed, course): its schema takes foreign elements in <extensions>. */
export const WAYGATE_GPX_NS = 'urn:waygate:gpx:1';

/** GPX 1.1 longitudeType is [-180, 180): the meridian 180 is written as -180. */
const lon = (value: number) => decimal(value >= 180 ? value - 360 : value);

/** xsd:decimal has no exponent: 1e-7 is written 0.0000001. */
export const decimal = (value: number) => {
  const text = String(value);
  return /e/i.test(text) ? value.toFixed(20).replace(/\.?0+$/, '') : text;
};

function trkpt(p: ExportPoint): string {
  // Element order is fixed by wptType: ele, time, …, hdop, vdop, pdop, extensions.
  let xml = `<trkpt lat="${decimal(p.latitude)}" lon="${lon(p.longitude)}">`;
  if (p.altitude !== null) xml += `<ele>${decimal(p.altitude)}</ele>`;
  xml += `<time>${p.timestamp.toISOString()}</time>`;
  if (p.hdop !== null) xml += `<hdop>${decimal(p.hdop)}</hdop>`;
  if (p.vdop !== null) xml += `<vdop>${decimal(p.vdop)}</vdop>`;
  if (p.pdop !== null) xml += `<pdop>${decimal(p.pdop)}</pdop>`;
  // A value the point does not have is no element at all (an empty or "null" one is unreadable elsewhere).
  if (p.speed_mps === null && p.heading === null) return `${xml}</trkpt>\n`;
  xml += '<extensions>';
  if (p.speed_mps !== null) xml += `<wg:speed>${decimal(p.speed_mps)}</wg:speed>`;
  if (p.heading !== null) xml += `<wg:course>${decimal(p.heading)}</wg:course>`;
  return `${xml}</extensions></trkpt>\n`;
}

/** GPX 1.1: one track of one segment, its points in time order. */
export const gpxWriter: FormatWriter = {
  contentType: 'application/gpx+xml',
  extension: 'gpx',
  head: ({ name, exportedAt }) =>
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    '<gpx version="1.1" creator="Waygate" xmlns="http://www.topografix.com/GPX/1/1" ' +
    `xmlns:wg="${WAYGATE_GPX_NS}" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" ` +
    'xsi:schemaLocation="http://www.topografix.com/GPX/1/1 http://www.topografix.com/GPX/1/1/gpx.xsd">\n' +
    `<metadata><name>${xmlText(name)}</name><time>${exportedAt.toISOString()}</time></metadata>\n` +
    `<trk><name>${xmlText(name)}</name><trkseg>\n`,
  points: (batch) => batch.map(trkpt).join(''),
  tail: () => '</trkseg></trk>\n</gpx>\n',
};
