import type { GpsService } from '../gps/service.js';
import type { ImportedPoint } from './parsers/validate.js';

/**
 * Where imported points go: a batch of one device's points, stored in one go, each point that the
 * device already has (same time and position) skipped and counted as a duplicate.
 */
export interface PointSink {
  insertBatch(input: { deviceId: string; sentBy: string | null; points: ImportedPoint[] }): Promise<{ stored: number; duplicates: number }>;
}

const KMH = 3.6;
const MPH = 2.236_936_292;
const KNOTS = 1.943_844_492;
const round = (value: number) => Math.round(value * 1000) / 1000;
/** The four speeds of a point from metres per second; all null when the file gives none. */
export const speedsOf = (mps: number | null) =>
  mps === null
    ? { speed_mps: null, speed_kmh: null, speed_mph: null, speed_knots: null }
    : { speed_mps: round(mps), speed_kmh: round(mps * KMH), speed_mph: round(mps * MPH), speed_knots: round(mps * KNOTS) };

/**
 * The GPS module's batch store: one statement (one transaction) per batch, through the writer every point
 * takes (trips, the latest-point cache, the gps channel see imported points too), duplicates skipped by the
 * unique index on device, time and position, so two imports of one file at once store each point once.
 * The points are the importing user's (sent_by), on the device the import names.
 */
export function createPointSinkOverBatch(gps: Pick<GpsService, 'importPoints'>): PointSink {
  return {
    async insertBatch({ deviceId, sentBy, points }) {
      if (points.length === 0) return { stored: 0, duplicates: 0 };
      const fields = points.map(({ speed_mps: mps, ...point }) => ({ ...point, ...speedsOf(mps) }));
      return gps.importPoints({ deviceId, sentBy }, fields);
    },
  };
}
