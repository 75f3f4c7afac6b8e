import type { GpsService } from '../gps/service.js';
import type { ImportedPoint } from './parsers/validate.js';

/**
 * Where imported points go: a batch of one device's points, stored in one go, each point that the
 * device already has (same time and position) skipped and counted as a duplicate.
 */
export interface PointSink {
  insertBatch(input: {
    deviceId: string;
    sentBy: string | null;
    /** The import storing them: each point names it. */
    importId: string;
    points: ImportedPoint[];
  }): Promise<{ stored: number; duplicates: number }>;
}

const KMH = 3.6;
const MPH = 2.236_936_292;
const KNOTS = 1.943_844_492;
const round = (value: number) => Math.round(value * 1000) / 1000;
const times = (mps: number | null, factor: number) => (mps === null ? null : round(mps * factor));

/**
 * A point of a file with its four speeds from metres per second (all null when the file gives none), made in
 * one object literal: an import makes one per point, and spreads made three.
 */
function withSpeeds(point: ImportedPoint) {
  const mps = point.speed_mps;
  return {
    timestamp: point.timestamp,
    latitude: point.latitude,
    longitude: point.longitude,
    altitude: point.altitude,
    heading: point.heading,
    hdop: point.hdop,
    vdop: point.vdop,
    pdop: point.pdop,
    speed_mps: times(mps, 1),
    speed_kmh: times(mps, KMH),
    speed_mph: times(mps, MPH),
    speed_knots: times(mps, KNOTS),
  };
}

/**
 * The GPS module's batch store: one statement (one transaction) per batch, through the writer every point
 * takes (trips, the latest-point cache, the gps channel see imported points too), duplicates skipped by the
 * unique index on device, time and position, so two imports of one file at once store each point once.
 * The points are the importing user's (sent_by), on the device the import names, and name the import (import_id).
 */
export function createPointSinkOverBatch(gps: Pick<GpsService, 'importPoints'>): PointSink {
  return {
    async insertBatch({ deviceId, sentBy, importId, points }) {
      if (points.length === 0) return { stored: 0, duplicates: 0 };
      return gps.importPoints({ deviceId, sentBy, importId }, points.map(withSpeeds));
    },
  };
}
