import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requirePermission } from '../../platform/auth/hooks.js';
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
  { geofences }: { geofences: GeofencesService },
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/v1/geofences',
    {
      config: { auth: requirePermission('geofences:read') },
      schema: {
        tags,
        summary: 'List geofences, newest first',
        querystring: PageQuery(10),
        response: { 200: PageEnvelope(Geofence) },
      },
    },
    async (request) => {
      const { rows, total } = await geofences.page(request.query.limit, offsetOf(request.query));
      return paginated(request, rows, total, request.query);
    },
  );

  app.get(
    '/v1/geofences/:id',
    {
      config: { auth: requirePermission('geofences:read') },
      schema: {
        tags,
        summary: 'Get a geofence',
        params: IdParams,
        response: {
          200: SingleEnvelope(Geofence),
          ...errorResponses(RequestErrors.validation, GeofenceErrors.not_found),
        },
      },
    },
    async (request) => single(request, await geofences.get(request.params.id)),
  );

  app.post(
    '/v1/geofences',
    {
      config: { auth: requirePermission('geofences:write') },
      schema: {
        tags,
        summary: 'Create a circular geofence',
        body: CreateGeofenceBody,
        response: { 201: SingleEnvelope(Geofence), ...errorResponses(RequestErrors.validation) },
      },
    },
    async (request, reply) => created(request, reply, '/v1/geofences', await geofences.create(request.body)),
  );

  app.patch(
    '/v1/geofences/:id',
    {
      config: { auth: requirePermission('geofences:write') },
      schema: {
        tags,
        summary: 'Update a geofence (at least one field; metadata is replaced as a whole)',
        params: IdParams,
        body: UpdateGeofenceBody,
        response: {
          200: SingleEnvelope(Geofence),
          ...errorResponses(RequestErrors.validation, GeofenceErrors.not_found),
        },
      },
    },
    async (request) => single(request, await geofences.update(request.params.id, request.body)),
  );

  app.delete(
    '/v1/geofences/:id',
    {
      config: { auth: requirePermission('geofences:delete') },
      schema: {
        tags,
        summary: 'Delete a geofence',
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses(RequestErrors.validation, GeofenceErrors.not_found) },
      },
    },
    async (request, reply) => {
      await geofences.remove(request.params.id);
      return reply.status(204).send(null);
    },
  );
}
