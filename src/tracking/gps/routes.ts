import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { callerOf, requireTracking } from '../../platform/auth/hooks.js';
import type { SharingService } from '../sharing/service.js';
import { requestScopeOf } from '../sharing/index.js';
import { SharingErrors } from '../sharing/errors.js';
import {
  created,
  errorResponses,
  PageEnvelope,
  sayIfEstimated,
  sendSerializedSingle,
  single,
  SingleEnvelope,
} from '../../platform/http/envelopes.js';
import { keysetPageOf, keysetPaginated, KeysetPageQuery, startOf } from '../../platform/http/keyset.js';
import { IdParams } from '../../platform/http/schemas.js';
import {
  BatchBody,
  BatchQuery,
  BatchRefusedBody,
  BatchResult,
  CreateGpsPointBody,
  CurrentQuery,
  GpsPoint,
  keyOfPoint,
} from './schemas.js';
import { UnreadableItem, type GpsService } from './service.js';
import { GpsErrors } from './errors.js';
import { RequestErrors } from '../../platform/http/errors.js';

const tags = ['GPS data'];

/** A batch of 10,000 points with every optional field is about 3.5 MB of JSON. */
const BATCH_BODY_LIMIT = 8 * 1024 * 1024;

/** NDJSON: one point per line; a line that is not JSON is refused alone (by its index), blank lines are skipped. */
function parseNdjson(text: string): unknown[] {
  const items: unknown[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      items.push(JSON.parse(line));
    } catch {
      items.push(new UnreadableItem(`Line ${items.length + 1} is not JSON`));
    }
  }
  return items;
}

export async function gpsRoutes(
  fastify: FastifyInstance,
  { gps, sharing }: { gps: GpsService; sharing: Pick<SharingService, 'scopeOf'> },
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const scopeOf = requestScopeOf(sharing);
  const scoped = SharingErrors.self_service_off;
  // Runs once in-flight requests are answered: whatever is still queued is committed before the database closes.
  app.addHook('onClose', () => gps.stop());

  app.get(
    '/v1/gps',
    {
      config: { auth: requireTracking('gps:read') },
      schema: {
        tags,
        summary: 'List GPS points, newest first',
        description:
          'Newest first; points of the same time by id, descending. Numbered pages (page) or, from any next link, ' +
          'the page after a cursor (after), which costs the same however deep. total is exact up to 10,000 points; ' +
          "beyond, it is PostgreSQL's estimate and the response carries X-Total-Count-Estimated: true.",
        querystring: KeysetPageQuery(10),
        response: { 200: PageEnvelope(GpsPoint), ...errorResponses(RequestErrors.validation, scoped) },
      },
    },
    async (request, reply) => {
      const page = keysetPageOf('gps', request.query);
      const list = await gps.page(await scopeOf(request), page.limit, startOf(page));
      sayIfEstimated(reply, list.estimated);
      return keysetPaginated(request, list, page, keyOfPoint);
    },
  );

  app.get(
    '/v1/gps/current',
    {
      config: { auth: requireTracking('gps:read') },
      schema: {
        tags,
        summary: 'The latest GPS point, overall or of one device',
        description:
          'Served from a cache (by default 5 minutes: system config gps.latest_cache_ttl_secs) that every new point refreshes.',
        querystring: CurrentQuery,
        response: {
          200: SingleEnvelope(GpsPoint),
          ...errorResponses(RequestErrors.validation, GpsErrors.no_point, scoped),
        },
      },
    },
    async (request, reply) => {
      const point = await gps.latestIn(await scopeOf(request), request.query.device_id);
      if (!point)
        throw GpsErrors.no_point(request.query.device_id ? 'No GPS point for this device' : 'No GPS point yet');
      return sendSerializedSingle(request, reply, point);
    },
  );

  app.get(
    '/v1/gps/current/devices',
    {
      config: { auth: requireTracking('gps:read') },
      schema: {
        tags,
        summary: 'The latest GPS point of every device (bare array)',
        response: { 200: Type.Array(GpsPoint), ...errorResponses(scoped) },
      },
    },
    async (request) => gps.latestPerDeviceIn(await scopeOf(request)),
  );

  app.get(
    '/v1/gps/:id',
    {
      config: { auth: requireTracking('gps:read') },
      schema: {
        tags,
        summary: 'Get a GPS point',
        params: IdParams,
        response: {
          200: SingleEnvelope(GpsPoint),
          ...errorResponses(RequestErrors.validation, GpsErrors.point_not_found, scoped),
        },
      },
    },
    async (request) => single(request, await gps.get(await scopeOf(request), request.params.id)),
  );

  app.post(
    '/v1/gps',
    {
      config: { auth: requireTracking('gps:write'), extraRateLimit: 'gpsWrite' },
      schema: {
        tags,
        summary: 'Record a GPS point',
        description:
          'timestamp is Unix seconds (answered as ISO 8601). Without device_id the point belongs to the device linked to ' +
          'the calling API key, if any. Counted against an extra rate limit (RATE_LIMIT_GPS_WRITE). Points arriving ' +
          'together are committed together (group commit); 201 means the point is committed.',
        body: CreateGpsPointBody,
        response: {
          201: SingleEnvelope(GpsPoint),
          ...errorResponses(
            GpsErrors.unknown_device,
            GpsErrors.device_required,
            GpsErrors.device_not_writable,
            GpsErrors.stopping,
            RequestErrors.validation,
            RequestErrors.rate_limited,
            scoped,
          ),
        },
      },
    },
    async (request, reply) => {
      const scope = await scopeOf(request);
      return created(request, reply, '/v1/gps', await gps.record(callerOf(request), scope, request.body));
    },
  );

  app.addContentTypeParser(
    'application/x-ndjson',
    { parseAs: 'string', bodyLimit: BATCH_BODY_LIMIT },
    (_request, body, done) => done(null, parseNdjson(body as string)),
  );
  app.post(
    '/v1/gps/batch',
    {
      config: { auth: requireTracking('gps:write'), extraRateLimit: 'gpsWrite' },
      bodyLimit: BATCH_BODY_LIMIT,
      schema: {
        tags,
        summary: 'Record up to 10,000 GPS points at once',
        description:
          'Points in the shape of POST /v1/gps, as a JSON array or as NDJSON (Content-Type: application/x-ndjson, one ' +
          'point per line). Each point is checked on its own: the valid ones are stored in one transaction, the others ' +
          'listed in refused (index, field, message). A point whose device, time and position are already stored is ' +
          'counted in duplicates and not stored again, so a batch may be sent again after a lost answer. With ' +
          'all_or_nothing=true any refusal stores nothing and answers 400 with the same list. Counted once against the ' +
          'extra rate limit of POST /v1/gps.',
        querystring: BatchQuery,
        body: BatchBody,
        response: {
          200: BatchResult,
          400: BatchRefusedBody,
          ...errorResponses(GpsErrors.stopping, RequestErrors.rate_limited, scoped),
        },
      },
    },
    async (request, reply) => {
      const allOrNothing = request.query.all_or_nothing === true;
      const scope = await scopeOf(request);
      const result = await gps.insertBatch(callerOf(request), scope, request.body, { allOrNothing });
      if (allOrNothing && result.refused.length > 0) {
        const refusal = GpsErrors.batch_refused();
        return reply
          .status(400)
          .send({ error: refusal.error, message: refusal.message, code: refusal.code, refused: result.refused });
      }
      return result;
    },
  );
  app.delete(
    '/v1/gps/:id',
    {
      config: { auth: requireTracking('gps:delete') },
      schema: {
        tags,
        summary: 'Delete a GPS point (not one that belongs to a trip)',
        params: IdParams,
        response: {
          204: Type.Null(),
          ...errorResponses(
            RequestErrors.validation,
            GpsErrors.point_not_found,
            GpsErrors.point_linked_to_trip,
            GpsErrors.device_not_writable,
            scoped,
          ),
        },
      },
    },
    async (request, reply) => {
      await gps.remove(await scopeOf(request), request.params.id);
      return reply.status(204).send(null);
    },
  );
}
