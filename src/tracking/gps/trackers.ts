import { GpsErrors } from './errors.js';
import type { DeviceTransition, PointFields } from './service.js';

/**
 * What tracker apps send, read into points (docs/gps.md, "Tracker apps", says what each app sends; the tests
 * beside this file replay the apps' requests). Pure functions: a message in, the point (or nothing to store)
 * out; a value that cannot be a position is refused with 400 naming the field as the client spelled it.
 */

const KNOT_IN_MPS = 1852 / 3600;
const MILE_IN_M = 1609.344;

type Speeds = Pick<PointFields, 'speed_kmh' | 'speed_mps' | 'speed_mph' | 'speed_knots'>;
const NO_SPEED: Speeds = { speed_kmh: null, speed_mps: null, speed_mph: null, speed_knots: null };

/**
 * The four speeds from one in the unit a client sends; the unit it came in is kept exactly as sent (no
 * round trip through another unit). Negative (the apps' -1), missing or not a number: unknown, all null.
 */
export function speedsFrom(value: number | null | undefined, unit: 'knots' | 'mps' | 'kmh'): Speeds {
  if (value === null || value === undefined || !Number.isFinite(value) || value < 0) return NO_SPEED;
  const mps = unit === 'knots' ? value * KNOT_IN_MPS : unit === 'kmh' ? value / 3.6 : value;
  return {
    speed_mps: unit === 'mps' ? value : mps,
    speed_kmh: unit === 'kmh' ? value : mps * 3.6,
    speed_mph: (mps * 3600) / MILE_IN_M,
    speed_knots: unit === 'knots' ? value : mps / KNOT_IN_MPS,
  };
}

/** Latest time a point may carry (as POST /v1/gps: year 3000). */
const LATEST_MS = 32_503_680_000_000;

function refuse(field: string, message: string): never {
  throw GpsErrors.invalid_point(`Field '${field}' ${message}`);
}

/** A finite number from a JSON number or a text one ("45.0", "1.0E-4"); undefined for absent or empty. */
function numberOf(value: unknown, field: string): number | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const number = typeof value === 'number' ? value : typeof value === 'string' ? Number(value.trim()) : Number.NaN;
  if (!Number.isFinite(number)) refuse(field, 'must be a number');
  return number;
}

/** A value that is only kept when it makes sense: -1 and other out-of-range values of optional fields mean "unknown". */
function within(value: number | undefined, min: number, max: number): number | null {
  return value !== undefined && value >= min && value <= max ? value : null;
}

function position(lat: unknown, lon: unknown, names: [string, string]): { latitude: number; longitude: number } {
  const latitude = numberOf(lat, names[0]);
  const longitude = numberOf(lon, names[1]);
  if (latitude === undefined) refuse(names[0], 'is required');
  if (longitude === undefined) refuse(names[1], 'is required');
  if (latitude < -90 || latitude > 90) refuse(names[0], 'must be between -90 and 90');
  if (longitude < -180 || longitude > 180) refuse(names[1], 'must be between -180 and 180');
  return { latitude, longitude };
}

function checkedTime(ms: number, field: string): Date {
  if (!Number.isFinite(ms) || ms < 0 || ms > LATEST_MS) refuse(field, 'is not a time between 1970 and 3000');
  // The database keeps milliseconds; a finer ISO time is cut to them (as Date does).
  return new Date(Math.floor(ms));
}

/** An ISO 8601 time; one without a zone is read as UTC (a server's zone would be a guess). */
function isoTime(text: string, field: string): Date {
  const trimmed = text.trim();
  const zoned = /(Z|[+-]\d{2}:?\d{2})$/i.test(trimmed) ? trimmed : `${trimmed}Z`;
  const ms = Date.parse(zoned.replace(' ', 'T'));
  if (Number.isNaN(ms)) refuse(field, 'must be Unix seconds, milliseconds or an ISO 8601 time');
  return checkedTime(ms, field);
}

/**
 * Traccar's `timestamp`: Unix seconds below 2^31-1, milliseconds above (as Traccar's decoder reads it),
 * ISO 8601 when it holds a `T`, `yyyy-MM-dd HH:mm:ss` (UTC here) otherwise; absent: now.
 */
export function osmandTime(value: unknown, now: Date): Date {
  if (value === undefined || value === '') return now;
  const text = String(value).trim();
  if (/^\d+(\.\d+)?$/.test(text)) {
    const number = Number(text);
    return checkedTime(number < 2_147_483_647 ? number * 1000 : number, 'timestamp');
  }
  return isoTime(text, 'timestamp');
}

function booleanOf(value: unknown): boolean | null {
  if (value === true || value === 'true' || value === '1' || value === 1) return true;
  if (value === false || value === 'false' || value === '0' || value === 0) return false;
  return null;
}

const textOf = (value: unknown, max: number): string | null =>
  typeof value === 'string' && value.trim() !== '' ? value.trim().slice(0, max) : null;

/** One value of a parameter sent once or repeated (the last one counts). */
const single = (value: unknown): unknown => (Array.isArray(value) ? value[value.length - 1] : value);

/**
 * OsmAnd parameters (Traccar Client 10.x form posts, classic query strings, GPSLogger's custom URL): the
 * point, or null when the request carries no position (a heartbeat, the notificationToken post). Beyond
 * Traccar's own parameters, `speed_mps` and `speed_kmh` take a speed in those units (GPSLogger's %SPD, %SPD_KPH).
 */
export function osmandPoint(raw: Record<string, unknown>, now: Date): PointFields | null {
  const params = Object.fromEntries(Object.entries(raw).map(([name, value]) => [name, single(value)]));
  let lat: unknown = params.lat;
  let lon: unknown = params.lon;
  if ((lat === undefined || lat === '') && typeof params.location === 'string') [lat, lon] = params.location.split(',');
  if ((lat === undefined || lat === '') && (lon === undefined || lon === '')) return null;
  const speeds =
    params.speed !== undefined && params.speed !== ''
      ? speedsFrom(numberOf(params.speed, 'speed'), 'knots')
      : params.speed_mps !== undefined && params.speed_mps !== ''
        ? speedsFrom(numberOf(params.speed_mps, 'speed_mps'), 'mps')
        : speedsFrom(numberOf(params.speed_kmh, 'speed_kmh'), 'kmh');
  const bearing = params.bearing ?? params.heading;
  return {
    ...position(
      lat,
      lon,
      params.location !== undefined && params.lat === undefined ? ['location', 'location'] : ['lat', 'lon'],
    ),
    timestamp: osmandTime(params.timestamp, now),
    ...speeds,
    heading: within(numberOf(bearing, params.bearing === undefined ? 'heading' : 'bearing'), 0, 360),
    altitude: numberOf(params.altitude, 'altitude') ?? null,
    accuracy: within(numberOf(params.accuracy, 'accuracy'), 0, Number.MAX_VALUE),
    hdop: within(numberOf(params.hdop, 'hdop'), 0, Number.MAX_VALUE),
    battery_level: within(numberOf(params.batt, 'batt'), 0, 100),
    charging: booleanOf(params.charge),
    alarm: textOf(params.alarm, 100),
  };
}

/** A battery level 0..1 as percent (0.8 → 80, not 80.00000000000001); negative (-1) unknown. */
const fraction = (level: number | undefined) =>
  level === undefined || level < 0 ? null : within(Math.round(level * 10_000) / 100, 0, 100);

const record = (value: unknown): Record<string, unknown> =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

/**
 * Traccar Client 9.x JSON (`{ location: { timestamp, coords, battery, activity, … }, device_id }`): the point, or
 * null without coordinates. A location with a position outside `coords` (`{ latitude, longitude }` as other apps
 * send it) is refused, not taken for a heartbeat.
 */
export function traccarJsonPoint(body: Record<string, unknown>): PointFields | null {
  const location = record(body.location);
  const coords = record(location.coords);
  if (coords.latitude === undefined && coords.longitude === undefined) {
    if (location.latitude !== undefined || location.longitude !== undefined)
      refuse('location.coords', 'is required (latitude and longitude go in it)');
    return null;
  }
  if (typeof location.timestamp !== 'string') refuse('location.timestamp', 'is required (ISO 8601)');
  const battery = record(location.battery);
  const level = numberOf(battery.level, 'location.battery.level');
  return {
    ...position(coords.latitude, coords.longitude, ['location.coords.latitude', 'location.coords.longitude']),
    timestamp: isoTime(location.timestamp, 'location.timestamp'),
    ...speedsFrom(numberOf(coords.speed, 'location.coords.speed'), 'mps'),
    heading: within(numberOf(coords.heading, 'location.coords.heading'), 0, 360),
    altitude: numberOf(coords.altitude, 'location.coords.altitude') ?? null,
    accuracy: within(numberOf(coords.accuracy, 'location.coords.accuracy'), 0, Number.MAX_VALUE),
    battery_level: fraction(level),
    charging: booleanOf(battery.is_charging),
    motion: textOf(record(location.activity).type, 200),
    alarm: textOf(location.alarm ?? body.alarm, 100),
  };
}

/**
 * Traccar's opt-in JSON batches (the client SDK's `uploadJson`, the 9.x plugin's `batchSync`): a JSON array of
 * 9.x bodies (or of bare locations), or one body whose `location` is an array. The points, those without
 * coordinates skipped (an item that is no object is refused); undefined for a body that is no batch.
 */
export function traccarJsonBatch(body: unknown): PointFields[] | undefined {
  const inLocation = !Array.isArray(body) && Array.isArray(record(body).location);
  const items = Array.isArray(body) ? body : inLocation ? (record(body).location as unknown[]) : undefined;
  return items?.flatMap((item, index) => {
    if (!item || typeof item !== 'object' || Array.isArray(item))
      refuse(inLocation ? `location[${index}]` : `[${index}]`, 'must be an object');
    const entry = item as Record<string, unknown>;
    return traccarJsonPoint('location' in entry ? entry : { location: entry }) ?? [];
  });
}

/** Whether a Traccar body is JSON of the 9.x client (its `location` an object), not OsmAnd's `location=lat,lon`. */
export const isTraccarJson = (body: Record<string, unknown>): boolean =>
  typeof body.location === 'object' && body.location !== null;

/** OwnTracks `bs`: 1 unplugged, 2 charging, 3 full (on the charger); 0 and anything else unknown. */
const OWNTRACKS_CHARGING: Record<number, boolean> = { 1: false, 2: true, 3: true };

/** An OwnTracks `_type: location` message: `tst` Unix seconds, `vel` km/h, `acc`/`alt` metres, `batt` %, `bs`. */
export function ownTracksPoint(message: Record<string, unknown>): PointFields {
  const tst = numberOf(message.tst, 'tst');
  if (tst === undefined) refuse('tst', 'is required');
  const activities = Array.isArray(message.motionactivities)
    ? message.motionactivities.filter((a): a is string => typeof a === 'string')
    : [];
  return {
    ...position(message.lat, message.lon, ['lat', 'lon']),
    timestamp: checkedTime(tst * 1000, 'tst'),
    ...speedsFrom(numberOf(message.vel, 'vel'), 'kmh'),
    heading: within(numberOf(message.cog, 'cog'), 0, 360),
    altitude: numberOf(message.alt, 'alt') ?? null,
    accuracy: within(numberOf(message.acc, 'acc'), 0, Number.MAX_VALUE),
    battery_level: within(numberOf(message.batt, 'batt'), 0, 100),
    charging: OWNTRACKS_CHARGING[numberOf(message.bs, 'bs') ?? 0] ?? null,
    motion: activities.length > 0 ? activities.join(',').slice(0, 200) : null,
  };
}

const OVERLAND_CHARGING: Record<string, boolean> = { charging: true, full: true, unplugged: false };

/**
 * One Overland Feature (the `index`th of `locations`): the point, or null for what is no position: a trip summary
 * (`properties.type`), a visit or a log entry (`properties.action`), a Feature without geometry. A position
 * that cannot be stored (coordinates missing or out of range, no time) is refused with 400 naming it, so the
 * batch is not answered "ok" without it (Overland keeps it and shows the error).
 */
export function overlandPoint(feature: unknown, index: number): PointFields | null {
  const properties = record(record(feature).properties);
  const geometry = record(feature).geometry;
  if (geometry === undefined || geometry === null || properties.type !== undefined || properties.action !== undefined)
    return null;
  const at = `locations[${index}]`;
  const coordinates = record(geometry).coordinates;
  if (!Array.isArray(coordinates) || coordinates.length < 2)
    refuse(`${at}.geometry.coordinates`, 'must be [longitude, latitude]');
  const { latitude, longitude } = position(coordinates[1], coordinates[0], [
    `${at}.geometry.coordinates[1]`,
    `${at}.geometry.coordinates[0]`,
  ]);
  if (typeof properties.timestamp !== 'string') refuse(`${at}.properties.timestamp`, 'is required (ISO 8601)');
  const time = Date.parse(properties.timestamp);
  if (Number.isNaN(time)) refuse(`${at}.properties.timestamp`, 'must be an ISO 8601 time');
  const number = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);
  const level = number(properties.battery_level);
  const motion = Array.isArray(properties.motion)
    ? properties.motion.filter((m): m is string => typeof m === 'string')
    : [];
  return {
    latitude,
    longitude,
    timestamp: checkedTime(time, `${at}.properties.timestamp`),
    ...speedsFrom(number(properties.speed), 'mps'),
    heading: within(number(properties.course), 0, 360),
    altitude: number(properties.altitude) ?? null,
    accuracy: within(number(properties.horizontal_accuracy), 0, Number.MAX_VALUE),
    battery_level: fraction(level),
    charging:
      typeof properties.battery_state === 'string' ? (OVERLAND_CHARGING[properties.battery_state] ?? null) : null,
    motion: motion.length > 0 ? motion.join(',').slice(0, 200) : null,
  };
}

/** The credential parts of HTTP Basic: the password (OwnTracks: any user name, the API key as password). */
export function basicPassword(header: string | undefined): string | null {
  const match = header && /^Basic\s+(\S+)$/i.exec(header.trim());
  if (!match) return null;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const password = colon < 0 ? '' : decoded.slice(colon + 1);
  return password === '' ? null : password;
}

/** The fields of an OwnTracks `transition` kept with its event (strings cut to 200 characters). */
const TRANSITION_FIELDS = ['event', 'desc', 'tid', 't', 'tst', 'wtst', 'acc', 'lat', 'lon', 'rid', '_id'] as const;

/**
 * An OwnTracks `transition` message (the app's own geofencing: `event` enter or leave, the region's name in
 * `desc`, `tst` Unix seconds, optionally where with `lat`, `lon`, `acc`), or null when it lacks what an event
 * needs: such a message is answered 200 [] and dropped (a 4xx would make iOS drop it with an alert and Android
 * retry it). Text PostgreSQL cannot store (a NUL character) never gets here: the API refuses any request holding
 * it with 400 naming the field, as for every route.
 */
export function ownTracksTransition(message: Record<string, unknown>): DeviceTransition | null {
  const event = message.event;
  const desc = message.desc;
  const tst = message.tst;
  if ((event !== 'enter' && event !== 'leave') || typeof desc !== 'string' || desc.length === 0) return null;
  if (typeof tst !== 'number' || !Number.isFinite(tst) || tst < 0 || tst > 32503680000) return null;
  const number = (value: unknown, limit: number) =>
    typeof value === 'number' && Number.isFinite(value) && Math.abs(value) <= limit ? value : null;
  let latitude = number(message.lat, 90);
  let longitude = number(message.lon, 180);
  if (latitude === null || longitude === null) latitude = longitude = null;
  const kept: Record<string, unknown> = {};
  for (const field of TRANSITION_FIELDS) {
    const value = message[field];
    if (typeof value === 'string') kept[field] = value.slice(0, 200);
    else if (typeof value === 'number' && Number.isFinite(value)) kept[field] = value;
  }
  return {
    event,
    region: desc.slice(0, 200),
    timestamp: new Date(Math.round(tst) * 1000),
    latitude,
    longitude,
    accuracy: number(message.acc, 1e7),
    message: kept,
  };
}
