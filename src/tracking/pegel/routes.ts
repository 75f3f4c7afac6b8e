import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requirePermission } from '../../platform/auth/hooks.js';
import { errorResponses } from '../../platform/http/envelopes.js';
import { Nullable } from '../../platform/http/schemas.js';
import type { PegelService } from './service.js';
import { WaterLevelErrors } from './errors.js';

const Station = Type.Object({
  station_id: Type.String(),
  shortname: Type.String(),
  longname: Type.String(),
  water_shortname: Nullable(Type.String()),
  water_longname: Nullable(Type.String()),
  latitude: Nullable(Type.Number()),
  longitude: Nullable(Type.Number()),
  km: Nullable(Type.Number()),
  agency: Nullable(Type.String()),
  level_cm: Nullable(Type.Number()),
  trend: Nullable(Type.Integer()),
  distance_km: Nullable(Type.Number({ description: 'From the reference position; null when there is none' })),
});

const position = {
  water: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Water body shortname, e.g. RHEIN' })),
  latitude: Type.Optional(
    Type.Number({ minimum: -90, maximum: 90, description: 'Reference position (default: the latest GPS point)' }),
  ),
  longitude: Type.Optional(Type.Number({ minimum: -180, maximum: 180 })),
};

const tags = ['Water levels'];
const unavailable = 'When the water-level service fails: 503.';

/** Registered only when WATER_LEVEL_API_URL is configured; otherwise these paths answer 404. */
export async function pegelRoutes(fastify: FastifyInstance, { pegel }: { pegel: PegelService }): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/v1/pegel/stations',
    {
      config: { auth: requirePermission('pegel:read') },
      schema: {
        tags,
        summary: 'Water-level stations with their current level',
        description: unavailable,
        querystring: Type.Object(position),
        response: { 200: Type.Array(Station), ...errorResponses(WaterLevelErrors.upstream_unavailable) },
      },
    },
    async (request) => pegel.stations(request.query.water, request.query),
  );

  app.get(
    '/v1/pegel/nearest',
    {
      config: { auth: requirePermission('pegel:read') },
      schema: {
        tags,
        summary: 'The station nearest to the current position',
        description: `404 when no station lies within radius km (or there is no position). ${unavailable}`,
        querystring: Type.Object({
          ...position,
          radius: Type.Optional(Type.Number({ exclusiveMinimum: 0, description: 'km' })),
        }),
        response: {
          200: Station,
          ...errorResponses(
            WaterLevelErrors.no_position,
            WaterLevelErrors.no_station,
            WaterLevelErrors.upstream_unavailable,
          ),
        },
      },
    },
    async (request) => pegel.nearest({ ...request.query, radiusKm: request.query.radius }),
  );
}
