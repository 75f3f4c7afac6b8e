import { JSONParser } from '@streamparser/json';
import { found, ImportFailure, refused, type Candidate, type Parsed } from './candidate.js';

/** Deeper than any location file nests (GeoJSON MultiLineString coordinates are 4 levels). */
export const MAX_JSON_DEPTH = 32;

/**
 * The most text read without an entry ending: the parser holds what it reads until then, so one entry (a
 * single Feature with a million coordinates) or a member no entry is in (a huge `metadata`) could fill the
 * memory. 8 MiB of JSON are some 300,000 positions.
 */
export const MAX_JSON_ENTRY_CHARS = 8 * 1024 * 1024;

/** The arrays whose entries are read, one entry at a time; everything else is skipped as it streams by. */
const PATHS = ['$.features.*', '$.locations.*', '$.semanticSegments.*', '$.rawSignals.*'];

type Json = unknown;
type Entry = Record<string, Json>;
const isObject = (value: Json): value is Entry => typeof value === 'object' && value !== null && !Array.isArray(value);

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
        else if (c === 92) escaped = true; // backslash
        else if (c === 34) inString = false; // quote
      } else if (c === 34) inString = true;
      else if (c === 123 || c === 91) {
        if (++depth > MAX_JSON_DEPTH) throw new ImportFailure('too_deep', `JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
      } else if (c === 125 || c === 93) depth--;
    }
  };
}

/** A position text is never longer than this; a longer one is refused before any pattern sees it. */
const MAX_POSITION_CHARS = 64;

/** "52.5163°, 13.3777°" or "geo:52.5163,13.3777" (Timeline.json) to a position; undefined for anything else. */
export function latLngOf(value: Json): { latitude: string; longitude: string } | undefined {
  if (typeof value !== 'string' || value.length > MAX_POSITION_CHARS) return undefined;
  // Trimmed first, the pattern has no two quantifiers that can share a character: linear time.
  const match = /^(?:geo:\s*)?(-?[\d.]+)°?\s*,\s*(-?[\d.]+)°?$/.exec(value.trim());
  return match ? { latitude: match[1]!, longitude: match[2]! } : undefined;
}

const first = (entry: Entry, ...names: string[]) => names.map((name) => entry[name]).find((value) => value !== undefined);

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
    if (!Array.isArray(coordinate) || coordinate.length < 2) return refused(where, 'coordinates are not [longitude, latitude]');
    const candidate: Candidate = { at: where, longitude: coordinate[0], latitude: coordinate[1], time, ...extra(properties) };
    if (coordinate[2] !== undefined) candidate.altitude = coordinate[2];
    return found(candidate);
  };
  if (type === 'Point') return yield position(coordinates, first(properties, 'timestamp', 'time', 'datetime', 'date'), at);
  if (type !== 'LineString' && type !== 'MultiPoint' && type !== 'MultiLineString') return yield refused(at, `a ${String(type)} geometry has no positions in time`);
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

/** Records.json (the older Takeout): latitudeE7/longitudeE7, timestamp (ISO) or timestampMs. */
function recordPoint(record: Json, at: string): Parsed {
  if (!isObject(record)) return refused(at, 'not an object');
  const e7 = (value: Json) => (typeof value === 'number' ? value / 1e7 : value);
  return found({
    at,
    latitude: e7(record.latitudeE7),
    longitude: e7(record.longitudeE7),
    time: first(record, 'timestamp', 'timestampMs'),
    altitude: record.altitude,
    speed: record.velocity,
    heading: record.heading,
  });
}

/** Timeline.json (on-device Timeline): a segment's path points, its visit and the ends of its activity. */
function* segmentPoints(segment: Json, at: string): Generator<Parsed> {
  if (!isObject(segment)) return yield refused(at, 'not an object');
  const place = (value: Json, time: Json, where: string): Parsed => {
    const position = latLngOf(value);
    return position ? found({ at: where, ...position, time }) : refused(where, 'no position ("lat°, lng°")');
  };
  if (Array.isArray(segment.timelinePath)) {
    for (const [i, step] of segment.timelinePath.entries()) {
      yield isObject(step) ? place(step.point, step.time, `${at}.timelinePath[${i}]`) : refused(`${at}.timelinePath[${i}]`, 'not an object');
    }
  }
  const visit = isObject(segment.visit) && isObject(segment.visit.topCandidate) && isObject(segment.visit.topCandidate.placeLocation)
    ? segment.visit.topCandidate.placeLocation.latLng
    : undefined;
  if (visit !== undefined) yield place(visit, segment.startTime, `${at}.visit`);
  if (isObject(segment.activity)) {
    const { start, end } = segment.activity;
    if (isObject(start)) yield place(start.latLng, segment.startTime, `${at}.activity.start`);
    if (isObject(end)) yield place(end.latLng, segment.endTime, `${at}.activity.end`);
  }
}

/** Timeline.json rawSignals: positions as the phone recorded them. */
function signalPoint(signal: Json, at: string): Parsed | undefined {
  if (!isObject(signal) || !isObject(signal.position)) return undefined; // wifi scans, activity records: no position
  const { position } = signal;
  const latLng = latLngOf(position.LatLng ?? position.latLng);
  if (!latLng) return refused(at, 'no position ("lat°, lng°")');
  return found({ at, ...latLng, time: position.timestamp, altitude: position.altitudeMeters, speed: position.speedMetersPerSecond });
}

/** GeoJSON FeatureCollections and both Google Takeout generations, streamed entry by entry. */
export async function* parseJson(text: AsyncIterable<string>): AsyncGenerator<Parsed> {
  const out: Parsed[] = [];
  const guard = depthGuard();
  const parser = new JSONParser({ paths: PATHS, keepStack: false });
  let entries = 0;
  parser.onValue = ({ value, key, stack }) => {
    entries++;
    const list = stack[1]?.key;
    const at = `${String(list)}[${String(key)}]`;
    if (list === 'features') out.push(...featurePoints(value, at));
    else if (list === 'locations') out.push(recordPoint(value, at));
    else if (list === 'semanticSegments') out.push(...segmentPoints(value, at));
    else if (list === 'rawSignals') {
      const point = signalPoint(value, at);
      if (point) out.push(point);
    }
  };
  const malformed = (err: unknown) =>
    err instanceof ImportFailure ? err : new ImportFailure('malformed_json', `Not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
  let any = false;
  /** Characters read since an entry last ended (counted a chunk at a time). */
  let sinceEntry = 0;
  for await (const chunk of text) {
    guard(chunk);
    any ||= chunk.trim() !== '';
    const before = entries;
    try {
      parser.write(chunk);
    } catch (err) {
      throw malformed(err);
    }
    sinceEntry = entries > before ? 0 : sinceEntry + chunk.length;
    if (sinceEntry > MAX_JSON_ENTRY_CHARS) {
      throw new ImportFailure('entry_too_large', `More than ${MAX_JSON_ENTRY_CHARS} characters of JSON without the end of an entry (a Feature, location or segment)`);
    }
    if (out.length > 0) yield* out.splice(0);
  }
  try {
    if (any && !parser.isEnded) parser.end();
  } catch (err) {
    throw malformed(err);
  }
  yield* out.splice(0);
}
