import type { Candidate } from './candidate.js';

/** A point of a file, checked: what the sink stores. */
export interface ImportedPoint {
  timestamp: Date;
  latitude: number;
  longitude: number;
  altitude: number | null;
  heading: number | null;
  /** Metres per second; null when the file does not say. */
  speed_mps: number | null;
  hdop: number | null;
  vdop: number | null;
  pdop: number | null;
}

/** Before this no GPS fix exists (the GPS epoch is 1980; Unix 0 is where broken clocks land). */
const EARLIEST = Date.UTC(1980, 0, 6);
/** Points from more than a day ahead of the server's clock are a device's broken clock. */
const AHEAD_MS = 86_400_000;

/**
 * The longest text read as a number or a time. Longer values are refused before any pattern sees them, so
 * no value of a file costs more than a few hundred character steps (a megabyte of digits is refused at once).
 */
export const MAX_VALUE_CHARS = 64;
/** A decimal number; unambiguous (no two quantifiers can share a character), so it runs in linear time. */
const NUMERIC = /^[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$/;

/** A finite number from a number or a numeric string; undefined for anything else. */
export function numberOf(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'string' || value.length > MAX_VALUE_CHARS) return undefined;
  const text = value.trim();
  return NUMERIC.test(text) ? Number(text) : undefined;
}

const ZONE = /(Z|[+-]\d\d:?\d\d)$/i;

/**
 * A time from ISO 8601 text (no zone: UTC), or epoch seconds or milliseconds (a number or digits:
 * below 10^11 seconds, else milliseconds). Kept to the millisecond, the precision points are stored in.
 */
export function timeOf(value: unknown): Date | undefined {
  const epoch = numberOf(value);
  if (epoch !== undefined) return new Date(Math.round(Math.abs(epoch) < 1e11 ? epoch * 1000 : epoch));
  if (typeof value !== 'string' || value.length > MAX_VALUE_CHARS || !/^\d{4}-\d\d-\d\d/.test(value.trim()))
    return undefined;
  const text = value.trim().replace(' ', 'T');
  const ms = Date.parse(ZONE.test(text) || !text.includes('T') ? text : `${text}Z`);
  return Number.isNaN(ms) ? undefined : new Date(ms);
}

/**
 * The point, or why it is refused. A position and a time are needed; an optional value that cannot be read
 * (an extension of another app, a speed out of range) is left out of the point and told to `note`.
 */
export function checkCandidate(
  candidate: Candidate,
  nowMs: number,
  note: (text: string) => void,
): ImportedPoint | string {
  const latitude = numberOf(candidate.latitude);
  const longitude = numberOf(candidate.longitude);
  if (candidate.latitude === undefined || candidate.longitude === undefined) return 'no position';
  if (latitude === undefined) return 'latitude is not a number';
  if (longitude === undefined) return 'longitude is not a number';
  if (latitude < -90 || latitude > 90) return `latitude ${latitude} is out of range (-90 to 90)`;
  if (longitude < -180 || longitude > 180) return `longitude ${longitude} is out of range (-180 to 180)`;
  if (candidate.time === undefined || candidate.time === null || candidate.time === '') return 'no time';
  const time = timeOf(candidate.time);
  if (!time || Number.isNaN(time.getTime())) return 'time is not a date-time or epoch number';
  if (time.getTime() < EARLIEST || time.getTime() > nowMs + AHEAD_MS)
    return `time ${time.toISOString()} is out of range`;
  /** An optional value: a number in range, or null (with a note when the file gave something else). */
  const optional = (name: keyof Candidate, min = -Infinity, max = Infinity): number | null => {
    const raw = candidate[name];
    if (raw === undefined || raw === null || raw === '') return null;
    const value = numberOf(raw);
    if (value === undefined) note(`${name} is not a number; left out`);
    else if (value < min || value > max) note(`${name} ${value} is out of range; left out`);
    else return value;
    return null;
  };
  const altitude = optional('altitude', -20_000, 1_000_000);
  const heading = optional('heading', -360, 360);
  const speed = optional('speed', -1, 100_000);
  return {
    timestamp: time,
    latitude,
    longitude,
    altitude,
    // Negative: "unknown" in several apps (Android's -1).
    heading: heading === null || heading < 0 ? null : heading % 360,
    speed_mps: speed === null || speed < 0 ? null : speed,
    hdop: optional('hdop', 0),
    vdop: optional('vdop', 0),
    pdop: optional('pdop', 0),
  };
}
