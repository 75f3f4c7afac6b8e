import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { callerOf, requirePermission } from '../../platform/auth/hooks.js';
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
import { keysetPageOf, keysetPaginated, KeysetPageQuery, startOf } from '../../platform/http/keyset.js';
import { GpsPoint, keyOfPoint } from '../gps/schemas.js';
import { CreateTripBody, Trip, TripHistoryEntry, TripListQuery, UpdateTripBody } from './schemas.js';
import type { TripsService } from './service.js';
import { DatabaseErrors, RequestErrors } from '../../platform/http/errors.js';
import { TripErrors } from './errors.js';

const tags = ['Trips'];

export async function tripRoutes(fastify: FastifyInstance, { trips }: { trips: TripsService }): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/v1/trips',
    {
      config: { auth: requirePermission('trips:read') },
      schema: {
        tags,
        summary: 'List trips, newest first',
        querystring: Type.Intersect([PageQuery(20), TripListQuery]),
        response: { 200: PageEnvelope(Trip) },
      },
    },
    async (request) => {
      const { page, limit, status } = request.query;
      const { rows, total } = await trips.page(limit, offsetOf({ page, limit }), status);
      return paginated(request, rows, total, { page, limit });
    },
  );

  app.get(
    '/v1/trips/:id',
    {
      config: { auth: requirePermission('trips:read') },
      schema: {
        tags,
        summary: 'Get a trip',
        params: IdParams,
        response: { 200: SingleEnvelope(Trip), ...errorResponses(RequestErrors.validation, TripErrors.not_found) },
      },
    },
    async (request) => single(request, await trips.get(request.params.id)),
  );

  app.post(
    '/v1/trips',
    {
      config: { auth: requirePermission('trips:write') },
      schema: {
        tags,
        summary: 'Create a trip (as a draft)',
        body: CreateTripBody,
        response: {
          201: SingleEnvelope(Trip),
          ...errorResponses(DatabaseErrors.missing_reference, RequestErrors.validation),
        },
      },
    },
    async (request, reply) => created(request, reply, '/v1/trips', await trips.create(request.body)),
  );

  app.patch(
    '/v1/trips/:id',
    {
      config: { auth: requirePermission('trips:write') },
      schema: {
        tags,
        summary: 'Update a trip, or move it through its status lifecycle',
        description:
          'status: draft → active, active → paused or completed, paused → active or completed; anything else is 400. ' +
          'Activating a GPS-logging trip while another one logs on the same device is 409. Each status change is ' +
          'recorded in the history with the start (activation) or end (completion) coordinates of the request, else ' +
          "the device's latest position.",
        params: IdParams,
        body: UpdateTripBody,
        response: {
          200: SingleEnvelope(Trip),
          ...errorResponses(
            DatabaseErrors.missing_reference,
            RequestErrors.validation,
            TripErrors.invalid_transition,
            TripErrors.not_found,
            TripErrors.logging_conflict,
          ),
        },
      },
    },
    async (request) => single(request, await trips.update(callerOf(request), request.params.id, request.body)),
  );

  app.delete(
    '/v1/trips/:id',
    {
      config: { auth: requirePermission('trips:delete') },
      schema: {
        tags,
        summary: 'Delete a draft or completed trip (its GPS points stay)',
        params: IdParams,
        response: {
          204: Type.Null(),
          ...errorResponses(RequestErrors.validation, TripErrors.not_found, TripErrors.not_deletable),
        },
      },
    },
    async (request, reply) => {
      await trips.remove(request.params.id);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/v1/trips/:id/gps',
    {
      config: { auth: requirePermission('trips:read') },
      schema: {
        tags,
        summary: "A trip's GPS points, oldest first",
        description:
          'Oldest first; points of the same time by id. Numbered pages (page) or, from any next link, the page after a ' +
          "cursor (after), which costs the same however deep. total is exact: the trip's own count of its points.",
        params: IdParams,
        querystring: KeysetPageQuery(10),
        response: { 200: PageEnvelope(GpsPoint), ...errorResponses(RequestErrors.validation, TripErrors.not_found) },
      },
    },
    async (request) => {
      const page = keysetPageOf(`trip:${request.params.id}`, request.query);
      return keysetPaginated(
        request,
        await trips.points(request.params.id, page.limit, startOf(page)),
        page,
        keyOfPoint,
      );
    },
  );

  app.get(
    '/v1/trips/:id/history',
    {
      config: { auth: requirePermission('trips:read') },
      schema: {
        tags,
        summary: "A trip's status changes, oldest first (bare array)",
        params: IdParams,
        response: {
          200: Type.Array(TripHistoryEntry),
          ...errorResponses(RequestErrors.validation, TripErrors.not_found),
        },
      },
    },
    async (request) => trips.history(request.params.id),
  );
}
