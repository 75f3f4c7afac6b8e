import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { callerOf, requireTracking } from '../../platform/auth/hooks.js';
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
import { keysetPageOf, keysetPaginated, KeysetPageQuery, startOf } from '../../platform/http/keyset.js';
import { GpsPoint, keyOfPoint } from '../gps/schemas.js';
import { CreateTripBody, Trip, TripHistoryEntry, TripListQuery, UpdateTripBody } from './schemas.js';
import type { TripsService } from './service.js';
import { DatabaseErrors, RequestErrors } from '../../platform/http/errors.js';
import { TripErrors } from './errors.js';
import { DeviceErrors } from '../devices/errors.js';

const tags = ['Trips'];

export async function tripRoutes(
  fastify: FastifyInstance,
  { trips, sharing }: { trips: TripsService; sharing: Pick<SharingService, 'scopeOf'> },
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const scopeOf = requestScopeOf(sharing);
  const scoped = SharingErrors.self_service_off;

  app.get(
    '/v1/trips',
    {
      config: { auth: requireTracking('trips:read') },
      schema: {
        tags,
        summary: 'List trips, newest first',
        querystring: Type.Intersect([PageQuery(20), TripListQuery]),
        response: { 200: PageEnvelope(Trip), ...errorResponses(RequestErrors.validation, scoped) },
      },
    },
    async (request) => {
      const { page, limit, status } = request.query;
      const { rows, total } = await trips.page(await scopeOf(request), limit, offsetOf({ page, limit }), status);
      return paginated(request, rows, total, { page, limit });
    },
  );

  app.get(
    '/v1/trips/:id',
    {
      config: { auth: requireTracking('trips:read') },
      schema: {
        tags,
        summary: 'Get a trip',
        params: IdParams,
        response: {
          200: SingleEnvelope(Trip),
          ...errorResponses(RequestErrors.validation, TripErrors.not_found, scoped),
        },
      },
    },
    async (request) => single(request, await trips.get(await scopeOf(request), request.params.id)),
  );

  app.post(
    '/v1/trips',
    {
      config: { auth: requireTracking('trips:write') },
      schema: {
        tags,
        summary: 'Create a trip (as a draft)',
        body: CreateTripBody,
        response: {
          201: SingleEnvelope(Trip),
          ...errorResponses(DatabaseErrors.missing_reference, RequestErrors.validation, DeviceErrors.not_owner, scoped),
        },
      },
    },
    async (request, reply) =>
      created(request, reply, '/v1/trips', await trips.create(await scopeOf(request), request.body)),
  );

  app.patch(
    '/v1/trips/:id',
    {
      config: { auth: requireTracking('trips:write') },
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
            TripErrors.not_owner,
            DeviceErrors.not_owner,
            scoped,
          ),
        },
      },
    },
    async (request) =>
      single(request, await trips.update(callerOf(request), await scopeOf(request), request.params.id, request.body)),
  );

  app.delete(
    '/v1/trips/:id',
    {
      config: { auth: requireTracking('trips:delete') },
      schema: {
        tags,
        summary: 'Delete a draft or completed trip (its GPS points stay)',
        params: IdParams,
        response: {
          204: Type.Null(),
          ...errorResponses(
            RequestErrors.validation,
            TripErrors.not_found,
            TripErrors.not_deletable,
            TripErrors.not_owner,
            scoped,
          ),
        },
      },
    },
    async (request, reply) => {
      await trips.remove(await scopeOf(request), request.params.id);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/v1/trips/:id/gps',
    {
      config: { auth: requireTracking('trips:read') },
      schema: {
        tags,
        summary: "A trip's GPS points, oldest first",
        description:
          'Oldest first; points of the same time by id. Numbered pages (page) or, from any next link, the page after a ' +
          "cursor (after), which costs the same however deep. total is exact: the trip's own count of its points.",
        params: IdParams,
        querystring: KeysetPageQuery(10),
        response: {
          200: PageEnvelope(GpsPoint),
          ...errorResponses(RequestErrors.validation, TripErrors.not_found, scoped),
        },
      },
    },
    async (request) => {
      const page = keysetPageOf(`trip:${request.params.id}`, request.query);
      return keysetPaginated(
        request,
        await trips.points(await scopeOf(request), request.params.id, page.limit, startOf(page)),
        page,
        keyOfPoint,
      );
    },
  );

  app.get(
    '/v1/trips/:id/history',
    {
      config: { auth: requireTracking('trips:read') },
      schema: {
        tags,
        summary: "A trip's status changes, oldest first (bare array)",
        params: IdParams,
        response: {
          200: Type.Array(TripHistoryEntry),
          ...errorResponses(RequestErrors.validation, TripErrors.not_found, scoped),
        },
      },
    },
    async (request) => trips.history(await scopeOf(request), request.params.id),
  );
}
