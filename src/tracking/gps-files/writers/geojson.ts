import type { ExportPoint, FormatWriter } from './types.js';

function feature(p: ExportPoint): string {
  // RFC 7946: longitude, latitude[, altitude]; WGS 84 decimal degrees.
  const coordinates = p.altitude === null ? [p.longitude, p.latitude] : [p.longitude, p.latitude, p.altitude];
  return JSON.stringify({
    type: 'Feature',
    id: p.id,
    geometry: { type: 'Point', coordinates },
    properties: {
      timestamp: p.timestamp.toISOString(),
      trip_id: p.trip_id,
      heading: p.heading,
      speed_kmh: p.speed_kmh,
      speed_mps: p.speed_mps,
      speed_mph: p.speed_mph,
      speed_knots: p.speed_knots,
      hdop: p.hdop,
      vdop: p.vdop,
      pdop: p.pdop,
    },
  });
}

/** GeoJSON (RFC 7946): a FeatureCollection of Point features in time order, streamed one feature at a time. */
export const geojsonWriter: FormatWriter = {
  contentType: 'application/geo+json',
  extension: 'geojson',
  head: ({ name }) => `{"type":"FeatureCollection","name":${JSON.stringify(name)},"features":[\n`,
  points: (batch, first) => (first ? '' : ',\n') + batch.map(feature).join(',\n'),
  tail: () => '\n]}\n',
};
