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
import type { Readable } from 'node:stream';
import type { Static } from 'typebox';
import type { Caller } from '../../platform/auth/caller.js';
import { INTERRUPTED, runImport } from './import.js';
import { hasDoctype, sniff, SNIFF_BYTES } from './parsers/index.js';
import type { PointSink } from './point-sink.js';
import { createGpsImportsRepo, toGpsImport } from './repo.js';
import type { ImportQuery } from './schemas.js';
import { headOf, removeDeadSpools, spool, type Spooled } from './spool.js';
import { createAdmission, type ImportLimits } from './admission.js';
import type { TrackingScope } from '../sharing/index.js';
import { GpsErrors } from '../gps/errors.js';
import { missingPermission } from '../../platform/auth/hooks.js';
import { AuthErrors } from '../../platform/http/errors.js';
import { dayIn } from '../../platform/days.js';

interface Deps {
  db: Kysely<Schema>;
  clock: Clock;
  log: FastifyBaseLogger;
  gps: Pick<GpsService, 'pointsOfDevice' | 'pointsOfTrip' | 'pointsSentBy' | 'trackOfDevice' | 'removeImported'>;
  devices: Pick<DevicesService, 'get' | 'ofApiKeys'>;
  trips: Pick<TripsService, 'readable'>;
  sink: PointSink;
  /** The time zone of a user's preferences (null: none chosen), for the day in an export's file name. */
  timeZoneOf: (userId: string) => Promise<string | null>;
  /** The largest file an import takes (IMPORT_MAX_BYTES). */
  importMaxBytes: number;
  /** How many imports and spooled bytes a node takes at once, and the slowest upload it waits for. */
  importLimits: ImportLimits & { minBytesPerSecond: number; rateWindowMs: number };
}

/**
 * GPS files: points out as GPX, GeoJSON, KML or CSV, streamed from keyset reads of the GPS module, and
 * files in (import.ts). Reads and writes of points go through the GPS module; this module owns only the
 * import records. (The service is `createGpsFilesService` below.)
 */

/** A running import's process stamps its record this often, so any node can tell a live import from a dead one. */
const HEARTBEAT_MS = 10_000;
/** A `running` import unheard of for this long has no process left (crashed or killed): it is shown as failed. */
export const IMPORT_STALE_MS = 60_000;

/** The time range of a query (both ends optional); from after to is refused. */
function rangeOf(input: { from?: string | undefined; to?: string | undefined }) {
  const from = input.from === undefined ? undefined : new Date(input.from);
  const to = input.to === undefined ? undefined : new Date(input.to);
  if (from && to && from > to) throw GpsFileErrors.bad_range();
  return { from, to };
}

/**
 * The earliest time of a device's points the scope may read (scope.ts): null for all of them (the global
 * permission, the owner, a share without a day limit), undefined for none (a device reached only live).
 */
const pointsSince = (scope: TrackingScope, deviceId: string) => (scope.all ? null : scope.access.pointsSince(deviceId));

/** The range narrowed to the points from `since` on (a grantee's window of N days). */
function within<R extends { from?: Date | undefined }>(range: R, since: number | null): R {
  if (since === null || (range.from && range.from.getTime() >= since)) return range;
  return { ...range, from: new Date(since) };
}

/** A track without points, as the GPS module answers an empty range. */
const EMPTY_COLUMNS = '{"time":[],"latitude":[],"longitude":[],"speed_kmh":[]}';

export function createGpsFilesService(deps: Deps) {
  const repo = createGpsImportsRepo(deps.db);
  const running = new Set<Promise<void>>();
  /** The ids of the imports this process runs, for the heartbeat. */
  const runningIds = new Set<string>();
  const stopping = new AbortController();
  let heartbeat: NodeJS.Timeout | undefined;
  const admission = createAdmission(deps.importLimits);
  // Uploads a crashed or killed process left behind (this process's own are all still in use).
  void removeDeadSpools()
    .then((removed) => removed > 0 && deps.log.info({ removed }, 'removed the spooled uploads of stopped processes'))
    .catch((err: unknown) => deps.log.warn({ err }, 'could not look for spooled uploads of stopped processes'));

  function beat(): void {
    void repo
      .touch([...runningIds], deps.clock.now())
      .catch((err: unknown) => deps.log.warn({ err }, 'could not stamp the running GPS imports'));
  }

  /**
   * The device a file is imported into: the one named, else the one linked to the calling key. A caller without
   * the global permission imports only into a device they own, as POST /v1/gps writes (docs/sharing.md).
   */
  async function deviceOf(caller: Caller, scope: TrackingScope, named: string | undefined) {
    const linked = named ?? (caller.apiKeyId ? (await deps.devices.ofApiKeys([caller.apiKeyId]))[0]?.id : undefined);
    if (!linked) throw scope.all ? GpsFileErrors.device_required() : GpsErrors.device_required();
    const device = await deps.devices.get(scope, linked);
    if (!scope.all && !scope.access.atLeast(device.id, 'owner')) throw GpsErrors.device_not_writable();
    return device;
  }

  /** An import's record, if the scope may read it: a caller without the global permission, only their own. */
  async function readableImport(scope: TrackingScope, id: string) {
    const record = await repo.get(id);
    return record && (scope.all || record.created_by === scope.userId) ? record : undefined;
  }

  /**
   * An import's record as it stands (404 for one the scope may not read). One still `running` that no process
   * has stamped for IMPORT_STALE_MS (the node that ran it crashed) is marked failed (interrupted) first, so it
   * never shows as running forever.
   */
  async function currentImport(scope: TrackingScope, id: string) {
    const record = await readableImport(scope, id);
    if (!record) throw GpsFileErrors.import_not_found();
    const now = deps.clock.now();
    if (
      record.status === 'running' &&
      !runningIds.has(id) &&
      (await repo.failIfStale(id, new Date(now.getTime() - IMPORT_STALE_MS), now, INTERRUPTED))
    ) {
      return (await readableImport(scope, id)) ?? record;
    }
    return record;
  }

  /** Marks the import reverted (its device may be deleted by now, and the record with it: 404). */
  async function reverted(id: string, outcome: { removed: number; keptInTrips: number }) {
    const record = await repo.reverted(id, outcome.removed, deps.clock.now());
    if (!record) throw GpsFileErrors.import_not_found();
    return { removed: outcome.removed, kept_in_trips: outcome.keptInTrips, import: toGpsImport(record) };
  }

  return {
    /**
     * Takes a file for import: the device must exist, the caller and the node must have a place free (429),
     * the body is spooled to disk (413 past IMPORT_MAX_BYTES, 503 when the node's spool is full, 408 when
     * it arrives too slowly), the format is named or sniffed (400 when neither tells, or for an XML DOCTYPE),
     * then the record is made and the job starts in this process. Answers the record (status running).
     */
    async startImport(
      caller: Caller,
      scope: TrackingScope,
      query: Static<typeof ImportQuery>,
      body: Readable,
      contentLength: number | undefined,
    ) {
      if (stopping.signal.aborted) throw GpsFileErrors.stopping();
      const device = await deviceOf(caller, scope, query.device_id);
      if (contentLength !== undefined && contentLength > deps.importMaxBytes) throw GpsFileErrors.too_large();
      const place = admission.admit(caller.userId ?? caller.apiKeyId ?? 'system');
      let file: Spooled;
      try {
        const { minBytesPerSecond, rateWindowMs } = deps.importLimits;
        file = await spool(body, {
          maxBytes: deps.importMaxBytes,
          admission: place,
          minBytesPerSecond,
          windowMs: rateWindowMs,
        });
      } catch (err) {
        place.release();
        throw err;
      }
      try {
        if (file.bytes === 0) throw GpsFileErrors.empty_file();
        const head = await headOf(file.path, SNIFF_BYTES);
        const format = query.format ?? sniff(head);
        if (!format) throw GpsFileErrors.unknown_format();
        if ((format === 'gpx' || format === 'kml' || format === 'tcx') && hasDoctype(head))
          throw GpsFileErrors.doctype_refused();
        const record = await repo.create({
          device_id: device.id,
          created_by: caller.isSystem ? null : caller.userId,
          format,
          bytes_total: file.bytes,
        });
        const job = runImport(
          { ...deps, repo },
          {
            id: record.id,
            deviceId: device.id,
            sentBy: caller.isSystem ? null : caller.userId,
            format,
            named: query.format !== undefined,
            file,
            signal: stopping.signal,
          },
        );
        running.add(job);
        runningIds.add(record.id);
        heartbeat ??= setInterval(beat, HEARTBEAT_MS).unref();
        void job.finally(() => {
          place.release();
          running.delete(job);
          runningIds.delete(record.id);
          if (runningIds.size === 0) heartbeat = void clearInterval(heartbeat);
        });
        return toGpsImport(record);
      } catch (err) {
        await file.discard();
        place.release();
        throw err;
      }
    },

    /** An import's record: a caller without the global permission reads only the imports they started (404 for any other). */
    getImport: async (scope: TrackingScope, id: string) => toGpsImport(await currentImport(scope, id)),

    /**
     * GET /v1/gps/imports: the imports the caller started, newest first, of one device or all; with `all` (only a
     * holder of the global permission) everyone's. A running import shows as it was last stamped.
     */
    async listImports(
      caller: Caller,
      scope: TrackingScope,
      query: { all?: boolean | undefined; device_id?: string | undefined },
      page: { limit: number; offset: number },
    ) {
      if (query.all && !scope.all) throw missingPermission('gps:write');
      if (!query.all && !caller.userId) throw AuthErrors.user_required();
      const filter = { startedBy: query.all ? undefined : caller.userId!, deviceId: query.device_id };
      const { rows, total } = await repo.page(filter, page.limit, page.offset);
      return { rows: rows.map(toGpsImport), total };
    },

    /**
     * DELETE /v1/gps/imports/{id}/points: removes the points the import stored, but those of a trip (which
     * DELETE /v1/gps/{id} refuses too), and marks it reverted. Its starter, while they own the device (a caller
     * without the global gps:delete), or a holder of gps:delete. Not while it runs (409); again later, it
     * removes what is left (points freed from a trip meanwhile).
     */
    async revertImport(scope: TrackingScope, id: string) {
      const record = await currentImport(scope, id);
      if (!scope.all && !scope.access.atLeast(record.device_id, 'owner')) throw GpsErrors.device_not_writable();
      if (record.status === 'running') throw GpsFileErrors.import_running();
      if (record.first_point_at === null || record.last_point_at === null) {
        // Points stored before imports named them (migration 0047) cannot be told from the device's others.
        if (record.imported > 0) throw GpsFileErrors.import_not_revertible();
        return reverted(id, { removed: 0, keptInTrips: 0 });
      }
      const outcome = await deps.gps.removeImported({
        deviceId: record.device_id,
        importId: id,
        from: record.first_point_at,
        to: record.last_point_at,
      });
      return reverted(id, outcome);
    },

    /** The imports still running end as failed (interrupted), with their reports, before the database closes. */
    async stop() {
      stopping.abort();
      await Promise.all(running);
    },

    /** Resolves once every running import has ended (tests wait on this). */
    idle: () => Promise.all(running).then(() => undefined),

    /**
     * A device's points over a time range, as a file. Throws (404, 403, 400) before any byte is sent. A caller
     * without the global permission exports their own devices and those shared with them at level full, within
     * the share's days; a live or history grantee may not (403), a device the scope does not see is not found.
     */
    async exportDevice(
      scope: TrackingScope,
      input: { deviceId: string; from?: string; to?: string; format: ExportFormat },
      reader: string | null,
    ) {
      const { from, to } = rangeOf(input);
      const device = await deps.devices.get(scope, input.deviceId);
      const since = pointsSince(scope, device.id);
      if (since === undefined || (!scope.all && !scope.access.atLeast(device.id, 'full')))
        throw GpsFileErrors.export_not_allowed();
      const exportedAt = deps.clock.now();
      // The file is named by the day in the reader's time zone (their preferences; none: UTC).
      const day = dayIn(from ?? exportedAt, reader ? await deps.timeZoneOf(reader) : null);
      return exportFile(
        input.format,
        `track-${fileSlug(device.name, device.id)}-${day}`,
        { name: device.name, exportedAt },
        deps.gps.pointsOfDevice(device.id, within({ from, to }, since)),
      );
    },

    /**
     * A device's track for a map (GET /v1/gps/track): 404 for a device the scope does not see, 400 for from after
     * to or too many points unthinned. A grantee's track holds the points of their window only: none for `live`.
     */
    async track(
      scope: TrackingScope,
      input: {
        deviceId: string;
        from?: string | undefined;
        to?: string | undefined;
        zoom?: number | undefined;
        view?: { width: number; height: number } | undefined;
      },
    ) {
      const range = rangeOf(input);
      await deps.devices.get(scope, input.deviceId);
      const since = pointsSince(scope, input.deviceId);
      if (since === undefined)
        return { total: 0, bounds: null, zoom: input.zoom ?? null, kept: 0, columnsJson: EMPTY_COLUMNS };
      const track = await deps.gps.trackOfDevice(input.deviceId, within(range, since), input);
      if (!track) throw GpsFileErrors.track_too_long();
      return track;
    },

    /** A trip's points, oldest first, as a file (404 for an unknown trip). */
    async exportTrip(scope: TrackingScope, tripId: string, format: ExportFormat) {
      const { trip, since } = await deps.trips.readable(scope, tripId);
      const exportedAt = deps.clock.now();
      return exportFile(
        format,
        `trip-${fileSlug(trip.name, trip.id)}`,
        { name: trip.name, exportedAt },
        pagesOf((limit, start) => deps.gps.pointsOfTrip(trip.id, limit, start, since)),
      );
    },

    /** The points a user sent, as GPX text a batch at a time (the personal data export's tracks.gpx). */
    async *gpxOfSender(userId: string, name: string): AsyncGenerator<string> {
      const { stream } = exportFile(
        'gpx',
        'tracks',
        { name, exportedAt: deps.clock.now() },
        deps.gps.pointsSentBy(userId),
      );
      for await (const chunk of stream) yield String(chunk);
    },
  };
}

export type GpsFilesService = ReturnType<typeof createGpsFilesService>;

export { createPointSinkOverBatch } from './point-sink.js';
