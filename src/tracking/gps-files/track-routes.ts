import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type, type Static, type TSchema } from 'typebox';
import { requireTracking } from '../../platform/auth/hooks.js';
import { errorResponses } from '../../platform/http/envelopes.js';
import { RequestErrors } from '../../platform/http/errors.js';
import { Nullable, Uuid } from '../../platform/http/schemas.js';
import { MAX_TRACK_POINTS, MAX_TRACK_ZOOM } from '../gps/service.js';
import { DeviceErrors } from '../devices/errors.js';
import { SharingErrors } from '../sharing/errors.js';
import { requestScopeOf } from '../sharing/index.js';
import type { SharingService } from '../sharing/service.js';
import { GpsFileErrors } from './errors.js';
import type { GpsFilesService } from './service.js';

const CAP = MAX_TRACK_POINTS.toLocaleString('en');
const pixels = (what: string) =>
  Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 8192,
      description: `The view's ${what} in pixels (with the other, picks the zoom)`,
    }),
  );

export const TrackQuery = Type.Object(
  {
    device_id: Uuid,
    from: Type.Optional(
      Type.String({ format: 'date-time', description: 'Points at or after this time (default: the first)' }),
    ),
    to: Type.Optional(
      Type.String({ format: 'date-time', description: 'Points at or before this time (default: the last)' }),
    ),
    zoom: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_TRACK_ZOOM,
        description: `Thin the track for a map at this zoom (256-pixel Web Mercator tiles; at most ${MAX_TRACK_ZOOM}, where a pixel is 4 cm): a point in the same pixel as the point before it is left out; the first and last are kept`,
      }),
    ),
    width: pixels('width'),
    height: pixels('height'),
  },
  {
    examples: [
      {
        device_id: '6f1c2b9e-8a43-4d7e-9b0a-2f5c1d3e4a51',
        from: '2026-01-15T00:00:00Z',
        to: '2026-01-15T23:59:59Z',
        width: 1280,
        height: 800,
      },
    ],
  },
);

const column = (description: string, item: TSchema = Type.Number()) => Type.Array(item, { description });

export const Track = Type.Object({
  device_id: Uuid,
  total: Type.Integer({ description: 'Points in the range' }),
  points: Type.Integer({ description: `Points returned (all of them without a zoom; never more than ${CAP})` }),
  zoom: Nullable(
    Type.Integer({
      description:
        'The zoom the track is thinned for: the one asked for, or the one at which bounds fit width × height; null: not thinned',
    }),
  ),
  bounds: Nullable(
    Type.Object(
      { south: Type.Number(), west: Type.Number(), north: Type.Number(), east: Type.Number() },
      { description: 'The box around every point of the range' },
    ),
  ),
  time: column("Each point's time, milliseconds since 1970 (UTC), oldest first", Type.Integer()),
  latitude: column("Each point's latitude"),
  longitude: column("Each point's longitude"),
  speed_kmh: column("Each point's speed in km/h"),
});

/**
 * A device's track for drawing on a map: columns of numbers instead of a file, thinned to what a map at a zoom
 * can show. The console's history page draws a 100,000-point day from it (docs/console.md).
 */
export async function trackRoutes(
  fastify: FastifyInstance,
  { gpsFiles, sharing }: { gpsFiles: GpsFilesService; sharing: Pick<SharingService, 'scopeOf'> },
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const scopeOf = requestScopeOf(sharing);

  app.get(
    '/v1/gps/track',
    {
      config: { auth: requireTracking('gps:read') },
      schema: {
        tags: ['GPS data'],
        summary: "A device's track over a time range as columns of numbers, thinned for a map",
        description:
          'Points between from and to (both inclusive), oldest first, as four arrays of the same length. With zoom, or with ' +
          'width and height (the zoom at which the points fit that view), consecutive points in the same pixel are left out, ' +
          `so a long track is as many points as the map can show; without them every point, up to ${CAP} (more answer 400). ` +
          `No answer holds more than ${CAP} points: when more than that are left at a zoom, they are thinned again evenly ` +
          `(the first of each of ${CAP} equal runs; the first and last kept), so the answer is always drawable. ` +
          'For files, use GET /v1/gps/export. A caller without gps:read reaches their own devices (every point) and those ' +
          'shared with them: a history or full share shows the points of its days, a live share an empty track (total 0).',
        querystring: TrackQuery,
        response: {
          200: Track,
          ...errorResponses(
            RequestErrors.validation,
            GpsFileErrors.bad_range,
            GpsFileErrors.track_too_long,
            DeviceErrors.not_found,
            SharingErrors.self_service_off,
          ),
        },
      },
    },
    async (request, reply) => {
      const { device_id: deviceId, from, to, zoom, width, height } = request.query;
      const track = await gpsFiles.track(await scopeOf(request), {
        deviceId,
        from,
        to,
        zoom,
        view: width && height ? { width, height } : undefined,
      });
      // The columns come from the database as JSON text (see gps/track.ts): sent as they are, after the few other
      // fields (Fastify sends a string with a JSON content type unserialised).
      const head = JSON.stringify({
        device_id: deviceId,
        total: track.total,
        points: track.kept,
        zoom: track.zoom,
        bounds: track.bounds,
      });
      const body = `${head.slice(0, -1)},${track.columnsJson.slice(1)}`;
      return reply
        .header('content-type', 'application/json; charset=utf-8')
        .send(body as unknown as Static<typeof Track>);
    },
  );
}
