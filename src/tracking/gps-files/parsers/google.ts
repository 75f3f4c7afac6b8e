import { found, noted, refused, type Parsed } from './candidate.js';
import { numberOf, timeOf } from './validate.js';

export type Json = unknown;
export type Entry = Record<string, Json>;
export const isObject = (value: Json): value is Entry =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
export const first = (entry: Entry, ...names: string[]) =>
  names.map((name) => entry[name]).find((value) => value !== undefined);

/** A position text is never longer than this; a longer one is refused before any pattern sees it. */
const MAX_POSITION_CHARS = 64;

/** "52.5163°, 13.3777°" or "geo:52.5163,13.3777" (Timeline.json) to a position; undefined for anything else. */
export function latLngOf(value: Json): { latitude: string; longitude: string } | undefined {
  if (typeof value !== 'string' || value.length > MAX_POSITION_CHARS) return undefined;
  // Trimmed first, the pattern has no two quantifiers that can share a character: linear time.
  const match = /^(?:geo:\s*)?(-?[\d.]+)°?\s*,\s*(-?[\d.]+)°?$/.exec(value.trim());
  return match ? { latitude: match[1]!, longitude: match[2]! } : undefined;
}

/** Degrees from E7 integers (Records.json, Semantic Location History). */
const e7 = (value: Json) => (typeof value === 'number' ? value / 1e7 : value);

/** A position in text ("lat°, lng°", "geo:lat,lng", or an object with latLng) at a time, or its refusal. */
function place(value: Json, time: Json, at: string): Parsed {
  const position = latLngOf(isObject(value) ? value.latLng : value);
  return position ? found({ at, ...position, time }) : refused(at, 'no position ("lat°, lng°")');
}

/** A stay at one position from `start` to `end`: a point at each end (one when they are the same). */
function* stay(position: Json, start: Json, end: Json, at: string, read = place): Generator<Parsed> {
  yield read(position, start, at);
  if (end !== undefined && end !== start) yield read(position, end, `${at} end`);
}

/** Records.json (the older Takeout): latitudeE7/longitudeE7, timestamp (ISO) or timestampMs. */
function* recordPoints(record: Json, at: string): Generator<Parsed> {
  if (!isObject(record)) return yield refused(at, 'not an object');
  yield found({
    at,
    latitude: e7(record.latitudeE7),
    longitude: e7(record.longitudeE7),
    time: first(record, 'timestamp', 'timestampMs'),
    altitude: record.altitude,
    speed: record.velocity,
    heading: record.heading,
  });
}

/**
 * Timeline.json (on-device Timeline on Android) and the iOS Google Maps export (a top-level array of the
 * same entries, positions as "geo:" text, path points timed as minutes after the entry's start): path points,
 * a visit at both its ends, an activity's start and end.
 */
function* segmentPoints(segment: Json, at: string): Generator<Parsed> {
  if (!isObject(segment)) return yield refused(at, 'not an object');
  const { startTime, endTime } = segment;
  if (Array.isArray(segment.timelinePath)) {
    for (const [i, step] of segment.timelinePath.entries()) {
      const where = `${at}.timelinePath[${i}]`;
      yield isObject(step)
        ? place(step.point, step.time ?? minutesAfter(startTime, step.durationMinutesOffsetFromStartTime), where)
        : refused(where, 'not an object');
    }
  }
  const visit =
    isObject(segment.visit) && isObject(segment.visit.topCandidate)
      ? segment.visit.topCandidate.placeLocation
      : undefined;
  if (visit !== undefined) yield* stay(visit, startTime, endTime, `${at}.visit`);
  if (isObject(segment.activity)) {
    const { start, end } = segment.activity;
    if (start !== undefined) yield place(start, startTime, `${at}.activity.start`);
    if (end !== undefined) yield place(end, endTime, `${at}.activity.end`);
  }
}

/** The time `minutes` after `start` (ISO text), or undefined when either cannot be read. */
function minutesAfter(start: Json, minutes: Json): string | undefined {
  const from = timeOf(start);
  const offset = numberOf(minutes);
  return from && offset !== undefined ? new Date(from.getTime() + offset * 60_000).toISOString() : undefined;
}

/** Timeline.json rawSignals: positions as the phone recorded them (wifi scans and activity records are not). */
function* signalPoints(signal: Json, at: string): Generator<Parsed> {
  if (!isObject(signal) || !isObject(signal.position)) return;
  const { position } = signal;
  const latLng = latLngOf(position.LatLng ?? position.latLng);
  if (!latLng) return yield refused(at, 'no position ("lat°, lng°")');
  yield found({
    at,
    ...latLng,
    time: position.timestamp,
    altitude: position.altitudeMeters,
    speed: position.speedMetersPerSecond,
  });
}

/** A position of E7 degrees (`latitudeE7`/`longitudeE7`, or `latE7`/`lngE7` on paths) at a time. */
function e7Place(location: Json, time: Json, at: string): Parsed {
  if (!isObject(location)) return refused(at, 'no position (latitudeE7, longitudeE7)');
  return found({
    at,
    latitude: e7(first(location, 'latitudeE7', 'latE7')),
    longitude: e7(first(location, 'longitudeE7', 'lngE7')),
    time,
  });
}

/** The raw path points of a visit or move: positions with their own times. */
function* rawPath(entry: Entry, at: string): Generator<Parsed> {
  const points = isObject(entry.simplifiedRawPath) ? entry.simplifiedRawPath.points : undefined;
  if (!Array.isArray(points)) return;
  for (const [i, point] of points.entries()) {
    yield e7Place(
      point,
      isObject(point) ? first(point, 'timestamp', 'timestampMs') : undefined,
      `${at}.simplifiedRawPath.points[${i}]`,
    );
  }
}

/**
 * Semantic Location History (Takeout's monthly files before 2024, `timelineObjects`): a place visit at both
 * ends of its duration, an activity segment's start and end locations, and the raw path points of either;
 * a segment's waypoints have no times and are noted as left out.
 */
function* timelineObjectPoints(object: Json, at: string): Generator<Parsed> {
  if (!isObject(object)) return yield refused(at, 'not an object');
  const entry = isObject(object.placeVisit)
    ? object.placeVisit
    : isObject(object.activitySegment)
      ? object.activitySegment
      : undefined;
  if (!entry) return yield refused(at, 'neither a placeVisit nor an activitySegment');
  const duration = isObject(entry.duration) ? entry.duration : {};
  const start = first(duration, 'startTimestamp', 'startTimestampMs');
  const end = first(duration, 'endTimestamp', 'endTimestampMs');
  if (entry === object.placeVisit) {
    yield* stay(entry.location, start, end, `${at}.placeVisit`, e7Place);
    return yield* rawPath(entry, `${at}.placeVisit`);
  }
  const where = `${at}.activitySegment`;
  yield e7Place(entry.startLocation, start, `${where}.startLocation`);
  yield* rawPath(entry, where);
  yield e7Place(entry.endLocation, end, `${where}.endLocation`);
  const waypoints =
    isObject(entry.waypointPath) && Array.isArray(entry.waypointPath.waypoints)
      ? entry.waypointPath.waypoints.length
      : 0;
  if (waypoints > 0) yield noted(where, `${waypoints} waypoints without times; left out`);
}

/** The readers of Google's files, by the array whose entries they read. */
export const ENTRY_READERS: Record<string, (entry: Json, at: string) => Iterable<Parsed>> = {
  locations: recordPoints,
  semanticSegments: segmentPoints,
  rawSignals: signalPoints,
  timelineObjects: timelineObjectPoints,
};

/** An entry of the iOS export's top-level array. */
export const phoneEntryPoints = segmentPoints;
