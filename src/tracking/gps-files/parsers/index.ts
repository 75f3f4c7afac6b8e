import type { Parser } from './candidate.js';
import { parseCsv } from './csv.js';
import { parseGpx } from './gpx.js';
import { parseJson } from './json.js';
import { parseKml } from './kml.js';
import { parseOwnTracks } from './owntracks.js';
import { parseTcx } from './tcx.js';

export type ImportFormat = 'gpx' | 'kml' | 'kmz' | 'tcx' | 'geojson' | 'csv' | 'owntracks' | 'takeout';

export const PARSERS: Record<ImportFormat, Parser> = {
  gpx: parseGpx,
  kml: parseKml,
  // The KML inside the zip (import.ts unpacks it).
  kmz: parseKml,
  tcx: parseTcx,
  geojson: parseJson,
  takeout: parseJson,
  csv: parseCsv,
  owntracks: parseOwnTracks,
};

/** How many bytes of the start of a file `sniff` reads. */
export const SNIFF_BYTES = 64 * 1024;

/** Whether the start of an XML file declares a document type (refused: entities could expand). */
export const hasDoctype = (head: string) => /<!DOCTYPE/i.test(head);

/** The format the start of a file shows, or undefined. */
export function sniff(head: string): ImportFormat | undefined {
  // A zip's local file header: KMZ is the one zip this import reads.
  if (head.startsWith('PK\u0003\u0004')) return 'kmz';
  const text = head.replace(/^\uFEFF/, '').trimStart();
  if (text.startsWith('<')) {
    if (/<(\w+:)?gpx[\s>]/.test(text)) return 'gpx';
    if (/<(\w+:)?kml[\s>]/.test(text)) return 'kml';
    if (/<(\w+:)?TrainingCenterDatabase[\s>]/.test(text)) return 'tcx';
    return undefined;
  }
  if (text.startsWith('{') || text.startsWith('[')) {
    if (/"(semanticSegments|rawSignals|locations|timelineObjects)"\s*:/.test(text)) return 'takeout';
    // The iOS Google Maps export: an array of visits, activities and paths.
    if (text.startsWith('[') && /"(visit|activity|timelinePath)"\s*:/.test(text)) return 'takeout';
    if (/"(FeatureCollection|features)"/.test(text)) return 'geojson';
    return undefined;
  }
  // "<time>\t<tag>\t<JSON>"; older Recorder versions separate them with spaces.
  if (/^\d{4}-\d\d-\d\dT\S*[\t ]+\S+[\t ]+\{/.test(text)) return 'owntracks';
  const firstLine = text.split('\n', 1)[0]!.toLowerCase();
  if (/\b(lat|latitude)\b/.test(firstLine) && /\b(lon|lng|long|longitude)\b/.test(firstLine)) return 'csv';
  return undefined;
}
