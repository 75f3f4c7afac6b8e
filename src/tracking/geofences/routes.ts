import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requireTracking } from '../../platform/auth/hooks.js';
import type { SharingService } from '../sharing/service.js';
import { SharingErrors } from '../sharing/errors.js';
import { requestScopeOf } from '../sharing/index.js';
import {
  created,
  errorResponses,
  offsetOf,
  PageEnvelope,
  PageQuery,
  paginated,
  single,
  SingleEnvelope,
} from '../../platform/http/envelopes.js';
import { IdParams } from '../../platform/http/schemas.js';
import { CreateGeofenceBody, Geofence, UpdateGeofenceBody } from './schemas.js';
import type { GeofencesService } from './service.js';
import { RequestErrors } from '../../platform/http/errors.js';
import { GeofenceErrors } from './errors.js';

const tags = ['Geofences'];

export async function geofenceRoutes(
  fastify: FastifyInstance,
  { geofences, sharing }: { geofences: GeofencesService; sharing: Pick<SharingService, 'scopeOf'> },
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const scopeOf = requestScopeOf(sharing);
  const scoped = SharingErrors.self_service_off;

  app.get(
    '/v1/geofences',
    {
      config: { auth: requireTracking('geofences:read') },
      schema: {
        tags,
        summary: 'List geofences, newest first',
        querystring: PageQuery(10),
        response: { 200: PageEnvelope(Geofence), ...errorResponses(RequestErrors.validation, scoped) },
      },
    },
    async (request) => {
      const { rows, total } = await geofences.page(
        await scopeOf(request),
        request.query.limit,
        offsetOf(request.query),
      );
      return paginated(request, rows, total, request.query);
    },
  );

  app.get(
    '/v1/geofences/:id',
    {
      config: { auth: requireTracking('geofences:read') },
      schema: {
        tags,
        summary: 'Get a geofence',
        params: IdParams,
        response: {
          200: SingleEnvelope(Geofence),
          ...errorResponses(RequestErrors.validation, GeofenceErrors.not_found, scoped),
        },
      },
    },
    async (request) => single(request, await geofences.get(await scopeOf(request), request.params.id)),
  );

  app.post(
    '/v1/geofences',
    {
      config: { auth: requireTracking('geofences:write') },
      schema: {
        tags,
        summary: 'Create a circular geofence',
        body: CreateGeofenceBody,
        response: {
          201: SingleEnvelope(Geofence),
          ...errorResponses(RequestErrors.validation, GeofenceErrors.too_many, scoped),
        },
      },
    },
    async (request, reply) =>
      created(request, reply, '/v1/geofences', await geofences.create(await scopeOf(request), request.body)),
  );

  app.patch(
    '/v1/geofences/:id',
    {
      config: { auth: requireTracking('geofences:write') },
      schema: {
        tags,
        summary: 'Update a geofence (at least one field; metadata is replaced as a whole)',
        params: IdParams,
        body: UpdateGeofenceBody,
        response: {
          200: SingleEnvelope(Geofence),
          ...errorResponses(RequestErrors.validation, GeofenceErrors.not_found, GeofenceErrors.not_owner, scoped),
        },
      },
    },
    async (request) => single(request, await geofences.update(await scopeOf(request), request.params.id, request.body)),
  );

  app.delete(
    '/v1/geofences/:id',
    {
      config: { auth: requireTracking('geofences:delete') },
      schema: {
        tags,
        summary: 'Delete a geofence',
        params: IdParams,
        response: {
          204: Type.Null(),
          ...errorResponses(RequestErrors.validation, GeofenceErrors.not_found, GeofenceErrors.not_owner, scoped),
        },
      },
    },
    async (request, reply) => {
      await geofences.remove(await scopeOf(request), request.params.id);
      return reply.status(204).send(null);
    },
  );
}
