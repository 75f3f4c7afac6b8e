import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requirePermission } from '../../platform/auth/hooks.js';
import { created, errorResponses, single, SingleEnvelope } from '../../platform/http/envelopes.js';
import { IdParams } from '../../platform/http/schemas.js';
import { CreateTripCategoryBody, TripCategory, UpdateTripCategoryBody } from './schemas.js';
import type { TripCategoriesService } from './service.js';
import { RequestErrors } from '../../platform/http/errors.js';
import { TripCategoryErrors } from './errors.js';

const tags = ['Trip categories'];
const parentRule =
  'parent_id must name an existing category, and not the category itself or one of its descendants (400).';

export async function tripCategoryRoutes(
  fastify: FastifyInstance,
  { tripCategories }: { tripCategories: TripCategoriesService },
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/v1/trip-categories',
    {
      config: { auth: requirePermission('trip_categories:read') },
      schema: {
        tags,
        summary: 'List all trip categories by sort_order, then name (bare array)',
        response: { 200: Type.Array(TripCategory) },
      },
    },
    async () => tripCategories.list(),
  );

  app.get(
    '/v1/trip-categories/:id',
    {
      config: { auth: requirePermission('trip_categories:read') },
      schema: {
        tags,
        summary: 'Get a trip category',
        params: IdParams,
        response: {
          200: SingleEnvelope(TripCategory),
          ...errorResponses(RequestErrors.validation, TripCategoryErrors.not_found),
        },
      },
    },
    async (request) => single(request, await tripCategories.get(request.params.id)),
  );

  app.post(
    '/v1/trip-categories',
    {
      config: { auth: requirePermission('trip_categories:write') },
      schema: {
        tags,
        summary: 'Create a trip category',
        description: parentRule,
        body: CreateTripCategoryBody,
        response: {
          201: SingleEnvelope(TripCategory),
          ...errorResponses(RequestErrors.validation, TripCategoryErrors.unknown_parent),
        },
      },
    },
    async (request, reply) => created(request, reply, '/v1/trip-categories', await tripCategories.create(request.body)),
  );

  app.patch(
    '/v1/trip-categories/:id',
    {
      config: { auth: requirePermission('trip_categories:write') },
      schema: {
        tags,
        summary: 'Update a trip category (at least one field)',
        description: parentRule,
        params: IdParams,
        body: UpdateTripCategoryBody,
        response: {
          200: SingleEnvelope(TripCategory),
          ...errorResponses(
            RequestErrors.validation,
            TripCategoryErrors.own_parent,
            TripCategoryErrors.parent_cycle,
            TripCategoryErrors.unknown_parent,
            TripCategoryErrors.not_found,
          ),
        },
      },
    },
    async (request) => single(request, await tripCategories.update(request.params.id, request.body)),
  );

  app.delete(
    '/v1/trip-categories/:id',
    {
      config: { auth: requirePermission('trip_categories:delete') },
      schema: {
        tags,
        summary: 'Delete a trip category (its children move to the top level)',
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses(RequestErrors.validation, TripCategoryErrors.not_found) },
      },
    },
    async (request, reply) => {
      await tripCategories.remove(request.params.id);
      return reply.status(204).send(null);
    },
  );
}
