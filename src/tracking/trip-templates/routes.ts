import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requirePermission } from '../../platform/auth/hooks.js';
import { created, errorResponses, single, SingleEnvelope } from '../../platform/http/envelopes.js';
import { IdParams } from '../../platform/http/schemas.js';
import { Trip } from '../trips/schemas.js';
import { CreateTripFromTemplateBody, CreateTripTemplateBody, TripTemplate, UpdateTripTemplateBody } from './schemas.js';
import type { TripTemplatesService } from './service.js';
import { DatabaseErrors, RequestErrors } from '../../platform/http/errors.js';
import { TripTemplateErrors } from './errors.js';

const tags = ['Trip templates'];

export async function tripTemplateRoutes(
  fastify: FastifyInstance,
  { tripTemplates }: { tripTemplates: TripTemplatesService },
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/v1/trip-templates',
    {
      config: { auth: requirePermission('trips:read') },
      schema: {
        tags,
        summary: 'List all trip templates by name (bare array)',
        response: { 200: Type.Array(TripTemplate) },
      },
    },
    async () => tripTemplates.list(),
  );

  app.get(
    '/v1/trip-templates/:id',
    {
      config: { auth: requirePermission('trips:read') },
      schema: {
        tags,
        summary: 'Get a trip template',
        params: IdParams,
        response: {
          200: SingleEnvelope(TripTemplate),
          ...errorResponses(RequestErrors.validation, TripTemplateErrors.not_found),
        },
      },
    },
    async (request) => single(request, await tripTemplates.get(request.params.id)),
  );

  app.post(
    '/v1/trip-templates',
    {
      config: { auth: requirePermission('trips:write') },
      schema: {
        tags,
        summary: 'Create a trip template',
        body: CreateTripTemplateBody,
        response: {
          201: SingleEnvelope(TripTemplate),
          ...errorResponses(DatabaseErrors.missing_reference, RequestErrors.validation),
        },
      },
    },
    async (request, reply) => created(request, reply, '/v1/trip-templates', await tripTemplates.create(request.body)),
  );

  app.patch(
    '/v1/trip-templates/:id',
    {
      config: { auth: requirePermission('trips:write') },
      schema: {
        tags,
        summary: 'Update a trip template (every field optional)',
        params: IdParams,
        body: UpdateTripTemplateBody,
        response: {
          200: SingleEnvelope(TripTemplate),
          ...errorResponses(DatabaseErrors.missing_reference, RequestErrors.validation, TripTemplateErrors.not_found),
        },
      },
    },
    async (request) => single(request, await tripTemplates.update(request.params.id, request.body)),
  );

  app.delete(
    '/v1/trip-templates/:id',
    {
      config: { auth: requirePermission('trips:delete') },
      schema: {
        tags,
        summary: 'Delete a trip template',
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses(RequestErrors.validation, TripTemplateErrors.not_found) },
      },
    },
    async (request, reply) => {
      await tripTemplates.remove(request.params.id);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/v1/trip-templates/:id/create-trip',
    {
      config: { auth: requirePermission('trips:write') },
      schema: {
        tags,
        summary: 'Create a draft trip from a template',
        description:
          "Every template value is copied; the name gets the suffix ' (from template)'; weight_kg comes from the body.",
        params: IdParams,
        body: CreateTripFromTemplateBody,
        response: {
          201: SingleEnvelope(Trip),
          ...errorResponses(DatabaseErrors.missing_reference, RequestErrors.validation, TripTemplateErrors.not_found),
        },
      },
    },
    async (request, reply) =>
      created(request, reply, '/v1/trips', await tripTemplates.createTrip(request.params.id, request.body.weight_kg)),
  );
}
