import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { requireTracking } from '../../platform/auth/hooks.js';
import { errorResponses, PageEnvelope, sayIfEstimated, single, SingleEnvelope } from '../../platform/http/envelopes.js';
import { RequestErrors } from '../../platform/http/errors.js';
import { keysetPageOf, keysetPaginated, startOf } from '../../platform/http/keyset.js';
import { IdParams } from '../../platform/http/schemas.js';
import { SharingErrors } from '../sharing/errors.js';
import { requestScopeOf } from '../sharing/index.js';
import type { SharingService } from '../sharing/service.js';
import { EventErrors } from './errors.js';
import { Event, EventsQuery, keyOfEvent } from './schemas.js';
import type { EventsService } from './service.js';

const tags = ['Events'];

export async function eventRoutes(
  fastify: FastifyInstance,
  { events, sharing }: { events: EventsService; sharing: Pick<SharingService, 'scopeOf'> },
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const scopeOf = requestScopeOf(sharing);
  const scoped = SharingErrors.self_service_off;

  app.get(
    '/v1/events',
    {
      config: { auth: requireTracking('events:read') },
      schema: {
        tags,
        summary: 'List events (geofence enter, exit, dwell, ...), newest first',
        description:
          'Events of the devices you may see (every device with events:read), newest first; events of the same time ' +
          'by id, descending. Filters: device_id, geofence_id, type, from and to (occurred_at, inclusive). Numbered ' +
          'pages (page) or, from any next link, the page after a cursor (after). total is exact up to 10,000 events; ' +
          "beyond, it is PostgreSQL's estimate and the response carries X-Total-Count-Estimated: true.",
        querystring: EventsQuery,
        response: { 200: PageEnvelope(Event), ...errorResponses(RequestErrors.validation, scoped) },
      },
    },
    async (request, reply) => {
      const { device_id, geofence_id, type, from, to } = request.query;
      const page = keysetPageOf('events', request.query);
      const list = await events.page(
        await scopeOf(request),
        {
          device_id,
          geofence_id,
          type,
          from: from === undefined ? undefined : new Date(from),
          to: to === undefined ? undefined : new Date(to),
        },
        page.limit,
        startOf(page),
      );
      sayIfEstimated(reply, list.estimated);
      return keysetPaginated(request, list, page, keyOfEvent);
    },
  );

  app.get(
    '/v1/events/:id',
    {
      config: { auth: requireTracking('events:read') },
      schema: {
        tags,
        summary: 'Get an event',
        params: IdParams,
        response: {
          200: SingleEnvelope(Event),
          ...errorResponses(RequestErrors.validation, EventErrors.not_found, scoped),
        },
      },
    },
    async (request) => single(request, await events.get(await scopeOf(request), request.params.id)),
  );
}
