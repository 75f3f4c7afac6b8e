import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import formBody from '@fastify/formbody';
import { Type } from 'typebox';
import { callerOf, requireTracking, type RouteAuth } from '../../platform/auth/hooks.js';
import type { Clock } from '../../platform/clock.js';
import { errorResponses } from '../../platform/http/envelopes.js';
import { RequestErrors } from '../../platform/http/errors.js';
import { GpsErrors } from './errors.js';
import type { GpsService } from './service.js';
import { ownTracksFriendMessages } from './owntracks-friends.js';
import { hasPermission } from '../../platform/auth/caller.js';
import { requestScopeOf } from '../sharing/index.js';
import type { SharingService } from '../sharing/service.js';
import { SharingErrors } from '../sharing/errors.js';
import {
  basicPassword,
  isTraccarJson,
  osmandPoint,
  overlandPoint,
  ownTracksPoint,
  ownTracksTransition,
  traccarJsonBatch,
  traccarJsonPoint,
} from './trackers.js';
import { OsmandBody, OsmandQuery, OverlandBody, OwnTracksBody } from './ingest-schemas.js';

const tags = ['GPS ingest'];
/** An Overland batch of 1,000 points with every property is well under this. */
const OVERLAND_BODY_LIMIT = 4 * 1024 * 1024;

/** 200 with an empty body, as Traccar's own server answers (its apps read no body). */
const answeredEmpty = (reply: FastifyReply) => reply.status(200).send(undefined as never);

const textParam = (value: unknown): string | null => {
  const last = Array.isArray(value) ? value[value.length - 1] : value;
  return typeof last === 'string' && last !== '' ? last : null;
};
const paramsOf = (part: unknown) =>
  part && typeof part === 'object' && !Array.isArray(part) ? (part as Record<string, unknown>) : {};

/** The key in the URL (`key`, or Traccar's device identifier `id`/`deviceid`), else HTTP Basic's password. */
const keyInUrl = (request: FastifyRequest) => {
  const query = paramsOf(request.query);
  return (
    textParam(query.key) ??
    textParam(query.id) ??
    textParam(query.deviceid) ??
    basicPassword(request.headers.authorization)
  );
};

/** Every route takes an API key with gps:write (or any credential holding it) as the client can send one. */
const writer = (extra: Pick<RouteAuth, 'credentialFrom' | 'credentialInBody'>): RouteAuth => ({
  ...requireTracking('gps:write'),
  ...extra,
});

const refusals = errorResponses(
  GpsErrors.invalid_point,
  GpsErrors.no_device_for_credential,
  GpsErrors.device_not_writable,
  GpsErrors.device_required,
  GpsErrors.unknown_device,
  SharingErrors.self_service_off,
  GpsErrors.stopping,
  RequestErrors.validation,
);
const credentialNote =
  'The point lands on the device linked to the API key (403 gps.no_device_for_credential when none is); ' +
  'what the client names as its device is not used. A point already stored (same device, time and position) is ' +
  'answered as stored and not stored again.';

/**
 * Tracker apps as they are, each on its own route (docs/gps.md, "Tracker apps"): Traccar Client
 * (OsmAnd; also GPSLogger's custom URL), OwnTracks (HTTP mode) and Overland. Each answers what its app
 * needs to count a point as delivered, and only once the point is committed; a request that carries a
 * position not stored is never answered 2xx (400 naming the field), so the app keeps it or shows the error.
 */
export async function ingestRoutes(
  fastify: FastifyInstance,
  { gps, clock, sharing }: { gps: GpsService; clock: Clock; sharing: Pick<SharingService, 'scopeOf' | 'accessOf'> },
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  /** A self-service user's key writes only to a device they own (docs/access.md, "Self-service tracking"). */
  const writeScope = requestScopeOf(sharing);
  // Traccar Client 10.x posts forms (only within these routes).
  await app.register(formBody, { bodyLimit: 64 * 1024 });
  // OwnTracks posts a zero-length JSON body to clear a contact; it must be answered 200 [] like any message.
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = (body as string).trim();
    if (text === '') return done(null, null);
    try {
      done(null, JSON.parse(text));
    } catch {
      done(RequestErrors.validation('Request body is not JSON'), undefined);
    }
  });

  const osmand = {
    config: {
      auth: writer({
        credentialFrom: keyInUrl,
        credentialInBody: (request: FastifyRequest) => {
          // A JSON batch names its device in each item: the first one's counts.
          const body = paramsOf(Array.isArray(request.body) ? request.body[0] : request.body);
          return textParam(body.key) ?? textParam(body.id) ?? textParam(body.deviceid) ?? textParam(body.device_id);
        },
      }),
    },
  };
  const osmandDescription =
    'Traccar Client (OsmAnd protocol): the 10.x form post, the 9.x JSON body (speed in m/s) and the classic ' +
    'query string (speed in knots), and GPSLogger through its custom URL (speed_mps=%SPD). The API key goes in ' +
    'the device identifier (`id`), a `key` parameter, a Bearer header or HTTP Basic as password. timestamp is ' +
    'Unix seconds, milliseconds or ISO 8601 (without a zone: UTC); a request without a position (a heartbeat) ' +
    "stores nothing. Traccar's opt-in JSON batches (a JSON array of up to 1,000 such bodies or bare locations, or " +
    'one body whose location is an array) are stored in one transaction. Answers 200 with an empty body. ' +
    credentialNote;

  const recordOsmand = async (request: FastifyRequest) => {
    // Only a JSON body is Traccar 9.x JSON; a form's `location` is OsmAnd's lat,lon (an array when repeated).
    const json = /^application\/json/i.test(request.headers['content-type'] ?? '');
    const batch = json ? traccarJsonBatch(request.body) : undefined;
    if (batch) return void (await gps.storeForKeyDevice(callerOf(request), await writeScope(request), batch));
    const body = paramsOf(request.body);
    const point =
      json && isTraccarJson(body)
        ? traccarJsonPoint(body)
        : osmandPoint({ ...body, ...paramsOf(request.query) }, clock.now());
    if (point) await gps.recordForKeyDevice(callerOf(request), await writeScope(request), point);
  };

  app.get(
    '/v1/ingest/osmand',
    {
      ...osmand,
      schema: {
        tags,
        summary: 'Traccar Client, GPSLogger: one position in the query string',
        description: osmandDescription,
        querystring: OsmandQuery,
        response: { 200: Type.Null({ description: 'Stored (empty body)' }), ...refusals },
      },
    },
    async (request, reply) => {
      await recordOsmand(request);
      return answeredEmpty(reply);
    },
  );

  app.post(
    '/v1/ingest/osmand',
    {
      ...osmand,
      // The classic apps post an empty body (everything is in the query string): an empty form, not a missing object.
      preValidation: (request, _reply, done) => {
        request.body ??= {};
        done();
      },
      schema: {
        tags,
        summary: 'Traccar Client: one position as a form, JSON body or query string',
        description: osmandDescription,
        querystring: OsmandQuery,
        body: OsmandBody,
        response: { 200: Type.Null({ description: 'Stored (empty body)' }), ...refusals },
      },
    },
    async (request, reply) => {
      await recordOsmand(request);
      return answeredEmpty(reply);
    },
  );

  app.post(
    '/v1/ingest/owntracks',
    {
      config: { auth: writer({ credentialFrom: keyInUrl }) },
      schema: {
        tags,
        summary: 'OwnTracks (HTTP mode): one message',
        description:
          'Set the API key as the password of HTTP Basic (any user name), or send it as Bearer or a key parameter. A ' +
          '`_type: location` message (or one without _type that has lat or lon) is stored (tst Unix seconds, vel km/h, ' +
          'acc and alt metres, batt percent, bs), or refused with 400 naming the field when it cannot be; every other ' +
          'message (waypoint, status, card, encrypted, an empty body) is answered 200 [] and not stored, so the app ' +
          'never retries it; a transition (event enter or leave, desc, tst) is recorded as a geofence event of the ' +
          "key's device (docs/events.md) and answered 200 [] (one without event, desc or tst is dropped). " +
          credentialNote,
        body: OwnTracksBody,
        response: {
          200: Type.Array(Type.Unknown(), {
            description:
              'Messages for the app: after a location, a card and the latest location of each device shared with ' +
              'the user (OwnTracks friends; none for a key without gps:read or gps:read_own), else none',
          }),
          ...refusals,
        },
      },
    },
    async (request) => {
      const message = paramsOf(request.body);
      // A location that cannot be stored (a latitude of 200, no tst) is refused, not answered [] as delivered: iOS
      // then drops it with an alert, Android retries it. The apps' own locations always carry both.
      const location =
        message._type === 'location' ||
        (message._type === undefined && (message.lat !== undefined || message.lon !== undefined));
      if (message._type === 'transition') {
        const transition = ownTracksTransition(message);
        if (transition) await gps.recordTransition(callerOf(request), await writeScope(request), transition);
        return [];
      }
      if (!location) return [];
      const caller = callerOf(request);
      await gps.recordForKeyDevice(caller, await writeScope(request), ownTracksPoint(message));
      // Friends: the devices shared with the user, for a credential that may read points at all.
      const mayRead = hasPermission(caller, 'gps:read') || hasPermission(caller, 'gps:read_own');
      if (!caller.userId || !mayRead) return [];
      return ownTracksFriendMessages(await gps.friendsOf(await sharing.accessOf(caller.userId)));
    },
  );

  app.post(
    '/v1/ingest/overland',
    {
      config: { auth: writer({ credentialFrom: (request) => textParam(paramsOf(request.query).key) }) },
      bodyLimit: OVERLAND_BODY_LIMIT,
      schema: {
        tags,
        summary: 'Overland: a batch of up to 1,000 GeoJSON points',
        description:
          'Set the API key as the access token (Authorization: Bearer), or as a key parameter in the receiver URL. The ' +
          'location Features (a geometry with [longitude, latitude] and properties.timestamp) are stored in one ' +
          'transaction (speed m/s, -1 unknown; battery_level 0..1); Features that are no position (trip summaries, ' +
          'visits, log entries: properties.type or properties.action) are skipped. Answers {"result":"ok"} once the ' +
          'batch is committed; a resent batch stores nothing twice. A location that cannot be stored refuses the whole ' +
          'batch with 400 naming it (locations[3].geometry.coordinates[1]): nothing is stored, and Overland keeps the ' +
          'batch and shows the error. ' +
          credentialNote,
        body: OverlandBody,
        response: {
          200: Type.Object({ result: Type.Literal('ok'), stored: Type.Integer(), duplicates: Type.Integer() }),
          ...refusals,
        },
      },
    },
    async (request) => {
      const points = request.body.locations.flatMap((feature, index) => overlandPoint(feature, index) ?? []);
      const { stored, duplicates } = await gps.storeForKeyDevice(callerOf(request), await writeScope(request), points);
      return { result: 'ok' as const, stored, duplicates };
    },
  );
}
