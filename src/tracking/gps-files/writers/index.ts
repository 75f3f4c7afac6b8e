import { csvWriter } from './csv.js';
import { geojsonWriter } from './geojson.js';
import { gpxWriter } from './gpx.js';
import { kmlWriter } from './kml.js';
import type { FormatWriter } from './types.js';

export const EXPORT_FORMATS = ['gpx', 'geojson', 'kml', 'csv'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const WRITERS: Record<ExportFormat, FormatWriter> = {
  gpx: gpxWriter,
  geojson: geojsonWriter,
  kml: kmlWriter,
  csv: csvWriter,
};

/** Media types an Accept header may name, and the format each asks for. */
const BY_MEDIA_TYPE: Record<string, ExportFormat> = {
  'application/gpx+xml': 'gpx',
  'application/geo+json': 'geojson',
  'application/json': 'geojson',
  'application/vnd.google-earth.kml+xml': 'kml',
  'text/csv': 'csv',
  '*/*': 'gpx',
  'application/*': 'gpx',
  'text/*': 'csv',
};

/**
 * The format an Accept header asks for: the acceptable media type of highest quality that we write
 * (GPX for any); undefined when it names none of them. No header: GPX.
 */
export function formatOfAccept(accept: string | undefined): ExportFormat | undefined {
  if (!accept) return 'gpx';
  const wanted = accept
    .split(',')
    .map((part, index) => {
      const [type = '', ...params] = part.split(';').map((piece) => piece.trim().toLowerCase());
      const q = params.find((param) => param.startsWith('q='));
      return { type, q: q ? Number(q.slice(2)) : 1, index };
    })
    .filter((entry) => entry.q > 0 && BY_MEDIA_TYPE[entry.type])
    .sort((a, b) => b.q - a.q || a.index - b.index);
  return wanted[0] && BY_MEDIA_TYPE[wanted[0].type];
}

export type { ExportMeta, ExportPoint, FormatWriter } from './types.js';
