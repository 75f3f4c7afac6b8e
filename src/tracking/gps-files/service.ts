import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Clock } from '../../platform/clock.js';
import type { Schema } from '../../platform/db/schema/index.js';
import type { DevicesService } from '../devices/service.js';
import type { GpsService } from '../gps/service.js';
import type { TripsService } from '../trips/service.js';
import { GpsFileErrors } from './errors.js';
import { exportFile, fileSlug, pagesOf } from './export.js';
import type { ExportFormat } from './writers/index.js';

interface Deps {
  db: Kysely<Schema>;
  clock: Clock;
  log: FastifyBaseLogger;
  gps: Pick<GpsService, 'pointsOfDevice' | 'pointsOfTrip' | 'pointsSentBy'>;
  devices: Pick<DevicesService, 'get'>;
  trips: Pick<TripsService, 'get'>;
}

/**
 * GPS files: points out as GPX, GeoJSON, KML or CSV, streamed from keyset reads of the GPS module, and
 * files in (import.ts). Reads and writes of points go through the GPS module; this module owns only the
 * import records.
 */
export function createGpsFilesService(deps: Deps) {
  return {
    /** A device's points over a time range, as a file. Throws (404, 400) before any byte is sent. */
    async exportDevice(input: { deviceId: string; from?: string; to?: string; format: ExportFormat }) {
      const from = input.from === undefined ? undefined : new Date(input.from);
      const to = input.to === undefined ? undefined : new Date(input.to);
      if (from && to && from > to) throw GpsFileErrors.bad_range();
      const device = await deps.devices.get(input.deviceId);
      const exportedAt = deps.clock.now();
      const day = (from ?? exportedAt).toISOString().slice(0, 10);
      return exportFile(input.format, `track-${fileSlug(device.name, device.id)}-${day}`, { name: device.name, exportedAt }, deps.gps.pointsOfDevice(device.id, { from, to }));
    },

    /** A trip's points, oldest first, as a file (404 for an unknown trip). */
    async exportTrip(tripId: string, format: ExportFormat) {
      const trip = await deps.trips.get(tripId);
      const exportedAt = deps.clock.now();
      return exportFile(format, `trip-${fileSlug(trip.name, trip.id)}`, { name: trip.name, exportedAt }, pagesOf((limit, start) => deps.gps.pointsOfTrip(trip.id, limit, start)));
    },

    /** The points a user sent, as GPX text a batch at a time (the personal data export's tracks.gpx). */
    async *gpxOfSender(userId: string, name: string): AsyncGenerator<string> {
      const { stream } = exportFile('gpx', 'tracks', { name, exportedAt: deps.clock.now() }, deps.gps.pointsSentBy(userId));
      for await (const chunk of stream) yield String(chunk);
    },
  };
}

export type GpsFilesService = ReturnType<typeof createGpsFilesService>;
