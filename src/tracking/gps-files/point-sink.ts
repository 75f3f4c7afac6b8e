import type { Caller } from '../../platform/auth/caller.js';
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
/** The four speeds of a point from metres per second (0 when the file gave none: the GPS schema requires them). */
export const speedsOf = (mps: number | null) => {
  const speed = mps ?? 0;
  return { speed_mps: round(speed), speed_kmh: round(speed * KMH), speed_mph: round(speed * MPH), speed_knots: round(speed * KNOTS) };
};

const keyOf = (point: { timestamp: Date; latitude: number; longitude: number }) => `${point.timestamp.getTime()}|${point.latitude}|${point.longitude}`;

/**
 * Until the GPS module offers a batch insert that skips duplicates (issue 31, item 3): the points of
 * a batch the device does not have yet (read over the batch's time span), written through the one-point
 * path (group-committed). Not safe against a second import of the same file at the same moment.
 */
export function createPointSinkOverRecord(gps: Pick<GpsService, 'record' | 'pointsOfDevice'>): PointSink {
  return {
    async insertBatch({ deviceId, sentBy, points }) {
      if (points.length === 0) return { stored: 0, duplicates: 0 };
      const times = points.map((point) => point.timestamp.getTime());
      const range = { from: new Date(Math.min(...times)), to: new Date(Math.max(...times)) };
      const seen = new Set<string>();
      for await (const batch of gps.pointsOfDevice(deviceId, range)) for (const point of batch) seen.add(keyOf(point));
      const fresh = points.filter((point) => {
        const key = keyOf(point);
        if (seen.has(key)) return false;
        seen.add(key);
        return true;
      });
      const caller: Caller = {
        kind: 'api_key', userId: sentBy, apiKeyId: null, sessionId: null, permissions: [], roles: [], isSystem: false,
        isSuperAdmin: false, provider: null, expiresAt: null, ownerPermissions: null,
      };
      await Promise.all(
        fresh.map(({ timestamp, speed_mps: mps, ...point }) =>
          gps.record(caller, { ...point, ...speedsOf(mps), heading: point.heading, timestamp: timestamp.getTime() / 1000, device_id: deviceId }),
        ),
      );
      return { stored: fresh.length, duplicates: points.length - fresh.length };
    },
  };
}
