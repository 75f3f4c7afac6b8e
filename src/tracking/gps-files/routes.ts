import type { FastifyInstance, FastifyReply } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Readable } from 'node:stream';
import { Type } from 'typebox';
import { callerOf, requireTracking } from '../../platform/auth/hooks.js';
import {
  errorResponses,
  locateCreated,
  offsetOf,
  PageEnvelope,
  PageQuery,
  paginated,
  single,
  SingleEnvelope,
} from '../../platform/http/envelopes.js';
import { AuthErrors, RequestErrors } from '../../platform/http/errors.js';
import { IdParams } from '../../platform/http/schemas.js';
import { DeviceErrors } from '../devices/errors.js';
import { GpsErrors } from '../gps/errors.js';
import { SharingErrors } from '../sharing/errors.js';
import { requestScopeOf } from '../sharing/index.js';
import type { SharingService } from '../sharing/service.js';
import { TripErrors } from '../trips/errors.js';
import { GpsFileErrors } from './errors.js';
import { chooseFormat, type ExportFile as File } from './export.js';
import {
  DeviceExportQuery,
  ExportFile,
  GpsImport,
  ImportFileBody,
  ImportListQuery,
  ImportQuery,
  MAX_REFUSALS_LISTED,
  RevertedImport,
  TripExportQuery,
} from './schemas.js';
import type { GpsFilesService } from './service.js';
import { WRITERS } from './writers/index.js';
import { trackRoutes } from './track-routes.js';

const tags = ['GPS files'];

/** The four formats as OpenAPI response content. */
const fileResponse = {
  description: 'The file, streamed; Content-Disposition names it',
  content: Object.fromEntries(Object.values(WRITERS).map((writer) => [writer.contentType, { schema: ExportFile }])),
};

const FORMAT_NOTE =
  'format (gpx, geojson, kml, csv) or else Accept (application/gpx+xml, application/geo+json, ' +
  'application/vnd.google-earth.kml+xml, text/csv; GPX for */*) chooses the file. GPX is 1.1 (speed and course in ' +
  '<extensions>, namespace urn:waygate:gpx:1), GeoJSON a FeatureCollection of Point features (RFC 7946), KML 2.2 one ' +
  'Placemark with a TimeStamp per point, CSV one header line and one line per point. Streamed as read, so any number of points.';

function sendFile(reply: FastifyReply, file: File) {
  return reply
    .header('content-type', file.contentType)
    .header('content-disposition', `attachment; filename="${file.fileName}"`)
    .header('cache-control', 'no-store')
    .header('vary', 'Accept')
    .send(file.stream);
}

export async function gpsFileRoutes(
  fastify: FastifyInstance,
  { gpsFiles, sharing }: { gpsFiles: GpsFilesService; sharing: Pick<SharingService, 'scopeOf'> },
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const scopeOf = requestScopeOf(sharing);

  app.get(
    '/v1/gps/export',
    {
      config: { auth: requireTracking('gps:read') },
      schema: {
        tags,
        summary: "A device's GPS points over a time range, as a GPX, GeoJSON, KML or CSV file",
        description:
          `Points of the device between from and to (both inclusive, both optional), oldest first. ${FORMAT_NOTE} ` +
          'A caller without gps:read exports their own devices, and those shared with them at level full (the points ' +
          "of the share's days); a live or history share answers 403 gps_file.export_not_allowed.",
        querystring: DeviceExportQuery,
        response: {
          200: fileResponse,
          ...errorResponses(
            RequestErrors.validation,
            GpsFileErrors.bad_range,
            DeviceErrors.not_found,
            GpsFileErrors.export_not_allowed,
            GpsFileErrors.not_acceptable,
            SharingErrors.self_service_off,
          ),
        },
      },
    },
    async (request, reply) => {
      const { device_id: deviceId, from, to } = request.query;
      const format = chooseFormat(request.query.format, request.headers.accept);
      const reader = callerOf(request).userId;
      return sendFile(
        reply,
        await gpsFiles.exportDevice(await scopeOf(request), { deviceId, from, to, format }, reader),
      );
    },
  );

  app.get(
    '/v1/trips/:id/export',
    {
      config: { auth: requireTracking('trips:read') },
      schema: {
        tags,
        summary: "A trip's GPS points as a GPX, GeoJSON, KML or CSV file",
        description: `The trip's points, oldest first (as GET /v1/trips/{id}/gps lists them). ${FORMAT_NOTE}`,
        params: IdParams,
        querystring: TripExportQuery,
        response: {
          200: fileResponse,
          ...errorResponses(
            RequestErrors.validation,
            TripErrors.not_found,
            GpsFileErrors.not_acceptable,
            SharingErrors.self_service_off,
          ),
        },
      },
    },
    async (request, reply) => {
      const format = chooseFormat(request.query.format, request.headers.accept);
      return sendFile(reply, await gpsFiles.exportTrip(await scopeOf(request), request.params.id, format));
    },
  );

  await app.register(importRoutes, { gpsFiles, sharing });
  await app.register(trackRoutes, { gpsFiles, sharing });
}

const IMPORT_NOTE =
  'The file is the request body, any content type, up to IMPORT_MAX_BYTES (413 beyond); it is stored to a temporary ' +
  'file as it arrives, then answered 202 with the import, which runs on: follow Location (GET /v1/gps/imports/{id}) ' +
  'for its status (running, done, failed), the points imported, the duplicates skipped (a point of the same time and ' +
  `position the device already has), the refused points or lines (all counted, the first ${MAX_REFUSALS_LISTED} listed with where and why) ` +
  'and the bytes read of the total. Formats: GPX 1.0/1.1 (trkpt, rtept, wpt with a time), KML 2.2 (Placemarks with a ' +
  'TimeStamp, gx:Track), GeoJSON (Point features with a time property, lines with coordTimes), CSV (a header naming ' +
  'time, latitude and longitude columns), OwnTracks Recorder .rec lines, TCX (Garmin, Strava), KMZ (zipped KML), and ' +
  "Google's location history: Records.json, Semantic Location History (timelineObjects), Timeline.json (semanticSegments, " +
  'rawSignals) and the iOS Google Maps export. XML with a DOCTYPE is refused (400); XML nested deeper than 64 elements or with a text, ' +
  'tag or comment over 4 MiB, JSON nested deeper than 32 levels or with more than 1 MiB in one entry, fail the import. ' +
  'A user has at most IMPORT_MAX_PER_USER imports uploading or running on a node, a node IMPORT_MAX_CONCURRENT (429 beyond); ' +
  'a node whose spooled uploads would pass IMPORT_SPOOL_MAX_BYTES answers 503, an upload slower than ' +
  'IMPORT_MIN_BYTES_PER_SECOND over IMPORT_RATE_WINDOW_SECS is cut off with 408. A caller without gps:write imports ' +
  'only into a device they own: 403 gps.device_not_writable for one shared with them, 400 gps.device_required ' +
  'without a device_id (or a key linked to one of theirs).';

/** The import routes take any body as a stream (their own parser, in this scope only). */
async function importRoutes(
  fastify: FastifyInstance,
  { gpsFiles, sharing }: { gpsFiles: GpsFilesService; sharing: Pick<SharingService, 'scopeOf'> },
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const scopeOf = requestScopeOf(sharing);
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
  // The body is the request stream, never checked: its schemas (ImportFileBody) only document the file.
  const validate = app.validatorCompiler;
  if (!validate) throw new Error('the validator compiler is registered before the GPS file routes');
  app.setValidatorCompiler((route) => (route.httpPart === 'body' ? () => true : validate(route)));
  // Before the database closes, running imports end (failed: interrupted) with their reports.
  app.addHook('onClose', () => gpsFiles.stop());

  app.post(
    '/v1/gps/import',
    {
      config: { auth: requireTracking('gps:write') },
      schema: {
        tags,
        summary:
          'Import a GPS file (GPX, KML, KMZ, TCX, GeoJSON, CSV, OwnTracks .rec, Google location history) into a device',
        description: IMPORT_NOTE,
        querystring: ImportQuery,
        body: ImportFileBody,
        response: {
          202: SingleEnvelope(GpsImport),
          ...errorResponses(
            RequestErrors.validation,
            GpsFileErrors.device_required,
            GpsErrors.device_required,
            DeviceErrors.not_found,
            GpsErrors.device_not_writable,
            SharingErrors.self_service_off,
            GpsFileErrors.empty_file,
            GpsFileErrors.unknown_format,
            GpsFileErrors.doctype_refused,
            GpsFileErrors.too_large,
            GpsFileErrors.stopping,
            GpsFileErrors.too_many_imports,
            GpsFileErrors.spool_full,
            GpsFileErrors.upload_too_slow,
          ),
        },
      },
    },
    async (request, reply) => {
      const length = request.headers['content-length'];
      const body = (request.body as Readable | undefined) ?? request.raw;
      const started = await gpsFiles.startImport(
        callerOf(request),
        await scopeOf(request),
        request.query,
        body,
        length === undefined ? undefined : Number(length),
      );
      const self = locateCreated(request, reply, `/v1/gps/imports/${started.id}`);
      return reply.status(202).send({ data: started, _links: { self } });
    },
  );

  app.get(
    '/v1/gps/imports/:id',
    {
      config: { auth: requireTracking('gps:write') },
      schema: {
        tags,
        summary: 'An import: its status, counts, refusals and progress',
        description:
          'Needs gps:write, the permission that starts imports (or gps:write_own: then only the imports you started). ' +
          'Updated several times a second while the file is read.',
        params: IdParams,
        response: {
          200: SingleEnvelope(GpsImport),
          ...errorResponses(RequestErrors.validation, GpsFileErrors.import_not_found, SharingErrors.self_service_off),
        },
      },
    },
    async (request) => single(request, await gpsFiles.getImport(await scopeOf(request), request.params.id)),
  );

  app.get(
    '/v1/gps/imports',
    {
      config: { auth: requireTracking('gps:write') },
      schema: {
        tags,
        summary: 'Your imports, newest first, with their reports',
        description:
          'The imports you started (device_id: into that device only). all=true lists everyone’s: holders of gps:write ' +
          'only (403 with gps:write_own). A credential without a user has imports of its own only with all=true.',
        querystring: Type.Intersect([PageQuery(20), ImportListQuery]),
        response: {
          200: PageEnvelope(GpsImport),
          ...errorResponses(RequestErrors.validation, AuthErrors.user_required, SharingErrors.self_service_off),
        },
      },
    },
    async (request) => {
      const { page, limit, ...filter } = request.query;
      const { rows, total } = await gpsFiles.listImports(callerOf(request), await scopeOf(request), filter, {
        limit,
        offset: offsetOf({ page, limit }),
      });
      return paginated(request, rows, total, { page, limit });
    },
  );

  app.delete(
    '/v1/gps/imports/:id/points',
    {
      config: { auth: requireTracking('gps:delete') },
      schema: {
        tags,
        summary: 'Remove the points an import stored',
        description:
          'Removes exactly the points this import stored on its device (never one the device had already, nor one ' +
          'sent meanwhile) and marks it reverted (reverted_at, removed). Points that belong to a trip stay, as ' +
          'DELETE /v1/gps/{id} keeps them (kept_in_trips counts them); delete or change the trip first and call again. ' +
          'The import’s starter while they own its device (gps:delete_own), or a holder of gps:delete. 409 while it runs, ' +
          'and for an import made before imports recorded their points.',
        params: IdParams,
        response: {
          200: SingleEnvelope(RevertedImport),
          ...errorResponses(
            RequestErrors.validation,
            GpsFileErrors.import_not_found,
            GpsErrors.device_not_writable,
            GpsFileErrors.import_running,
            GpsFileErrors.import_not_revertible,
            SharingErrors.self_service_off,
          ),
        },
      },
    },
    async (request) => single(request, await gpsFiles.revertImport(await scopeOf(request), request.params.id)),
  );
}
