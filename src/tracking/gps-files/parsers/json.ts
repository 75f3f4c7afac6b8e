import { JSONParser } from '@streamparser/json';
import { found, ImportFailure, refused, type Candidate, type Parsed } from './candidate.js';

/** Deeper than any location file nests (GeoJSON MultiLineString coordinates are 4 levels). */
export const MAX_JSON_DEPTH = 32;

/**
 * The most text read without an entry ending: the parser holds what it reads until then, so one entry (a
 * single Feature with a million coordinates) or a member no entry is in (a huge `metadata`) could fill the
 * memory. Its objects and garbage cost far more than the text: one 4 MiB Feature grew a Node 24 process by
 * 164 MB, 1 MiB by 58 MB (hostile-import.test.ts holds it under 100). 1 MiB of JSON are some 40,000 bare
 * positions, or 17,000 of a LineString with altitudes and coordTimes.
 */
export const MAX_JSON_ENTRY_CHARS = 1024 * 1024;

/**
 * The arrays whose entries are read, one entry at a time; everything else is skipped as it streams by. A file
 * that is an array (the iOS Google Maps export) has its entries at the top.
 */
const OBJECT_PATHS = ['$.features.*', ...Object.keys(ENTRY_READERS).map((list) => `$.${list}.*`)];
const ARRAY_PATHS = ['$.*'];

import { ENTRY_READERS, first, isObject, phoneEntryPoints, type Entry, type Json } from './google.js';

/**
 * Counts how deep arrays and objects nest, outside strings, across chunks, and stops a file nested deeper
 * than MAX_JSON_DEPTH before the parser holds it (a file of a million brackets is refused, not parsed).
 */
function depthGuard() {
  let depth = 0;
  let inString = false;
  let escaped = false;
  return (chunk: string) => {
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk.charCodeAt(i);
      if (inString) {
        if (escaped) escaped = false;
        else if (c === 92)
          escaped = true; // backslash
        else if (c === 34) inString = false; // quote
      } else if (c === 34) inString = true;
      else if (c === 123 || c === 91) {
        if (++depth > MAX_JSON_DEPTH)
          throw new ImportFailure('too_deep', `JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
      } else if (c === 125 || c === 93) depth--;
    }
  };
}

/** A GeoJSON Feature: a Point with a time property, or a line (or points) with coordTimes beside it. */
function* featurePoints(feature: Json, at: string): Generator<Parsed> {
  if (!isObject(feature) || !isObject(feature.geometry)) return yield refused(at, 'not a Feature with a geometry');
  const properties = isObject(feature.properties) ? feature.properties : {};
  const { type, coordinates } = feature.geometry;
  const extra = (props: Entry) => ({
    altitude: first(props, 'altitude', 'ele', 'elevation'),
    speed: first(props, 'speed', 'speed_mps'),
    heading: first(props, 'course', 'heading', 'bearing'),
    hdop: props.hdop,
    vdop: props.vdop,
    pdop: props.pdop,
  });
  const position = (coordinate: Json, time: Json, where: string): Parsed => {
    if (!Array.isArray(coordinate) || coordinate.length < 2)
      return refused(where, 'coordinates are not [longitude, latitude]');
    const candidate: Candidate = {
      at: where,
      longitude: coordinate[0],
      latitude: coordinate[1],
      time,
      ...extra(properties),
    };
    if (coordinate[2] !== undefined) candidate.altitude = coordinate[2];
    return found(candidate);
  };
  if (type === 'Point')
    return yield position(coordinates, first(properties, 'timestamp', 'time', 'datetime', 'date'), at);
  if (type !== 'LineString' && type !== 'MultiPoint' && type !== 'MultiLineString')
    return yield refused(at, `a ${String(type)} geometry has no positions in time`);
  const lines = type === 'MultiLineString' ? coordinates : [coordinates];
  const times = type === 'MultiLineString' ? properties.coordTimes : [properties.coordTimes];
  if (!Array.isArray(lines) || !Array.isArray(times)) return yield refused(at, `a ${type} without coordTimes`);
  for (const [l, line] of lines.entries()) {
    const lineTimes = times[l];
    if (!Array.isArray(line) || !Array.isArray(lineTimes) || lineTimes.length !== line.length) {
      yield refused(at, 'coordTimes do not match the coordinates');
      continue;
    }
    for (const [i, coordinate] of line.entries()) yield position(coordinate, lineTimes[i], `${at} position ${i + 1}`);
  }
}

/** The JSON parser for a file that starts with `start` ({ or [), telling `read` each entry. */
function entryParser(start: string, read: (entry: Json, list: string | undefined, key: string) => void) {
  const parser = new JSONParser({ paths: start === '[' ? ARRAY_PATHS : OBJECT_PATHS, keepStack: false });
  parser.onValue = ({ value, key, stack }) =>
    read(value, stack.length === 1 ? undefined : String(stack[1]?.key), String(key));
  return parser;
}

/**
 * GeoJSON FeatureCollections and Google's location history (Records.json, Semantic Location History,
 * Timeline.json, the iOS export), streamed entry by entry.
 */
export async function* parseJson(text: AsyncIterable<string>): AsyncGenerator<Parsed> {
  const out: Parsed[] = [];
  const guard = depthGuard();
  let entries = 0;
  const read = (entry: Json, list: string | undefined, key: string) => {
    entries++;
    if (list === undefined) return out.push(...phoneEntryPoints(entry, `[${key}]`));
    const at = `${list}[${key}]`;
    if (list === 'features') out.push(...featurePoints(entry, at));
    else out.push(...ENTRY_READERS[list]!(entry, at));
  };
  let parser: JSONParser | undefined;
  const malformed = (err: unknown) =>
    err instanceof ImportFailure
      ? err
      : new ImportFailure('malformed_json', `Not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
  /** Characters read since an entry last ended (counted a chunk at a time). */
  let sinceEntry = 0;
  for await (const chunk of text) {
    guard(chunk);
    parser ??= chunk.trim() === '' ? undefined : entryParser(chunk.replace(/^[\uFEFF\s]+/, '')[0]!, read);
    if (!parser) continue;
    const before = entries;
    try {
      parser.write(chunk);
    } catch (err) {
      throw malformed(err);
    }
    sinceEntry = entries > before ? 0 : sinceEntry + chunk.length;
    if (sinceEntry > MAX_JSON_ENTRY_CHARS) {
      throw new ImportFailure(
        'entry_too_large',
        `More than ${MAX_JSON_ENTRY_CHARS} characters of JSON without the end of an entry (a Feature, location or segment)`,
      );
    }
    if (out.length > 0) yield* out.splice(0);
  }
  try {
    if (parser && !parser.isEnded) parser.end();
  } catch (err) {
    throw malformed(err);
  }
  yield* out.splice(0);
}
