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
  if (typeof value !== 'string' || value.length > MAX_VALUE_CHARS || !/^\d{4}-\d\d-\d\d/.test(value.trim())) return undefined;
  const text = value.trim().replace(' ', 'T');
  const ms = Date.parse(ZONE.test(text) || !text.includes('T') ? text : `${text}Z`);
  return Number.isNaN(ms) ? undefined : new Date(ms);
}

/** The point, or why it is refused. */
export function checkCandidate(candidate: Candidate, nowMs: number): ImportedPoint | string {
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
  if (time.getTime() < EARLIEST || time.getTime() > nowMs + AHEAD_MS) return `time ${time.toISOString()} is out of range`;
  const optional = (name: keyof Candidate, min = -Infinity, max = Infinity): number | null | string => {
    const raw = candidate[name];
    if (raw === undefined || raw === null || raw === '') return null;
    const value = numberOf(raw);
    if (value === undefined) return `${name} is not a number`;
    return value < min || value > max ? `${name} ${value} is out of range` : value;
  };
  const altitude = optional('altitude', -20_000, 1_000_000);
  const heading = optional('heading', -360, 360);
  const speed = optional('speed', -1, 100_000);
  const hdop = optional('hdop', 0);
  const vdop = optional('vdop', 0);
  const pdop = optional('pdop', 0);
  for (const value of [altitude, heading, speed, hdop, vdop, pdop]) if (typeof value === 'string') return value;
  return {
    timestamp: time,
    latitude,
    longitude,
    altitude: altitude as number | null,
    // Negative: "unknown" in several apps (Android's -1).
    heading: heading === null || (heading as number) < 0 ? null : (heading as number) % 360,
    speed_mps: speed === null || (speed as number) < 0 ? null : (speed as number),
    hdop: hdop as number | null,
    vdop: vdop as number | null,
    pdop: pdop as number | null,
  };
}
