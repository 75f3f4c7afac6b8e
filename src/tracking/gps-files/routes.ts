import type { FastifyInstance, FastifyReply } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { requirePermission } from '../../platform/auth/hooks.js';
import { errorResponses } from '../../platform/http/envelopes.js';
import { RequestErrors } from '../../platform/http/errors.js';
import { IdParams } from '../../platform/http/schemas.js';
import { DeviceErrors } from '../devices/errors.js';
import { TripErrors } from '../trips/errors.js';
import { GpsFileErrors } from './errors.js';
import { chooseFormat, type ExportFile as File } from './export.js';
import { DeviceExportQuery, ExportFile, TripExportQuery } from './schemas.js';
import type { GpsFilesService } from './service.js';
import { WRITERS } from './writers/index.js';

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

export async function gpsFileRoutes(fastify: FastifyInstance, { gpsFiles }: { gpsFiles: GpsFilesService }): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/v1/gps/export', {
    config: { auth: requirePermission('gps:read') },
    schema: {
      tags,
      summary: "A device's GPS points over a time range, as a GPX, GeoJSON, KML or CSV file",
      description: `Points of the device between from and to (both inclusive, both optional), oldest first. ${FORMAT_NOTE}`,
      querystring: DeviceExportQuery,
      response: {
        200: fileResponse,
        ...errorResponses(RequestErrors.validation, GpsFileErrors.bad_range, DeviceErrors.not_found, GpsFileErrors.not_acceptable),
      },
    },
  }, async (request, reply) => {
    const { device_id: deviceId, from, to } = request.query;
    const format = chooseFormat(request.query.format, request.headers.accept);
    return sendFile(reply, await gpsFiles.exportDevice({ deviceId, from, to, format }));
  });

  app.get('/v1/trips/:id/export', {
    config: { auth: requirePermission('trips:read') },
    schema: {
      tags,
      summary: "A trip's GPS points as a GPX, GeoJSON, KML or CSV file",
      description: `The trip's points, oldest first (as GET /v1/trips/{id}/gps lists them). ${FORMAT_NOTE}`,
      params: IdParams,
      querystring: TripExportQuery,
      response: { 200: fileResponse, ...errorResponses(RequestErrors.validation, TripErrors.not_found, GpsFileErrors.not_acceptable) },
    },
  }, async (request, reply) => {
    const format = chooseFormat(request.query.format, request.headers.accept);
    return sendFile(reply, await gpsFiles.exportTrip(request.params.id, format));
  });
}
