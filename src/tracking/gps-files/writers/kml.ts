import { xmlText, type ExportPoint, type FormatWriter } from './types.js';

function placemark(p: ExportPoint): string {
  const time = p.timestamp.toISOString();
  const coordinates =
    p.altitude === null ? `${p.longitude},${p.latitude}` : `${p.longitude},${p.latitude},${p.altitude}`;
  const mode = p.altitude === null ? '' : '<altitudeMode>absolute</altitudeMode>';
  return `<Placemark><name>${time}</name><TimeStamp><when>${time}</when></TimeStamp><Point>${mode}<coordinates>${coordinates}</coordinates></Point></Placemark>\n`;
}

/** KML 2.2: a Document of one Placemark per point, each with its TimeStamp (a time slider in Google Earth). */
export const kmlWriter: FormatWriter = {
  contentType: 'application/vnd.google-earth.kml+xml',
  extension: 'kml',
  head: ({ name }) =>
    '<?xml version="1.0" encoding="UTF-8"?>\n<kml xmlns="http://www.opengis.net/kml/2.2">\n' +
    `<Document><name>${xmlText(name)}</name>\n`,
  points: (batch) => batch.map(placemark).join(''),
  tail: () => '</Document>\n</kml>\n',
};
