import { Type } from 'typebox';
import { Body, DateTime, named, Nullable, uuid, Uuid } from '../../platform/http/schemas.js';

export const GpsPoint = named(
  'GpsPoint',
  Type.Object({
    id: Uuid,
    device_id: Type.Optional(uuid({ description: 'Present when the point belongs to a device' })),
    trip_id: Nullable(Uuid),
    latitude: Type.Number(),
    longitude: Type.Number(),
    altitude: Nullable(Type.Number()),
    heading: Nullable(Type.Number()),
    timestamp: DateTime,
    speed_kmh: Nullable(Type.Number({ description: 'null (all four): the device did not know its speed' })),
    speed_mps: Nullable(Type.Number()),
    speed_mph: Nullable(Type.Number()),
    speed_knots: Nullable(Type.Number()),
    pdop: Nullable(Type.Number()),
    hdop: Nullable(Type.Number()),
    vdop: Nullable(Type.Number()),
    accuracy: Nullable(Type.Number({ description: 'Horizontal accuracy in metres, as the device reported it' })),
    battery_level: Nullable(Type.Number({ description: 'Battery charge in percent (0 to 100)' })),
    charging: Nullable(Type.Boolean({ description: 'Whether the battery was charging (or full on the charger)' })),
    motion: Nullable(
      Type.String({
        description:
          'The activity the phone reported (walking, running, cycling, driving, stationary, still…); several joined by commas',
      }),
    ),
    alarm: Nullable(
      Type.String({ description: "An alarm raised with the point, e.g. sos (Traccar Client's SOS button)" }),
    ),
    created_at: DateTime,
  }),
);

const speed = Type.Number({ minimum: 0 });
const dop = Type.Optional(Nullable(Type.Number({ minimum: 0 })));

/** The fields of a new point beyond the spec's, all optional (what the tracker apps report). */
export const extraPointFields = {
  accuracy: Type.Optional(Nullable(Type.Number({ minimum: 0, description: 'Horizontal accuracy in metres' }))),
  battery_level: Type.Optional(
    Nullable(Type.Number({ minimum: 0, maximum: 100, description: 'Battery charge in percent' })),
  ),
  charging: Type.Optional(Nullable(Type.Boolean())),
  motion: Type.Optional(
    Nullable(Type.String({ maxLength: 200, description: 'walking, driving, …; several joined by commas' })),
  ),
  alarm: Type.Optional(Nullable(Type.String({ maxLength: 100, description: 'e.g. sos' }))),
};

const newPointFields = {
  latitude: Type.Number({ minimum: -90, maximum: 90 }),
  longitude: Type.Number({ minimum: -180, maximum: 180 }),
  altitude: Type.Optional(Nullable(Type.Number())),
  heading: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 360 }))),
  timestamp: Type.Integer({ minimum: 0, maximum: 32503680000, description: 'Unix time in seconds' }),
  speed_kmh: speed,
  speed_mps: speed,
  speed_mph: speed,
  speed_knots: speed,
  pdop: dop,
  hdop: dop,
  vdop: dop,
  device_id: Type.Optional(uuid({ description: 'Default: the device linked to the calling API key' })),
  ...extraPointFields,
};

export const CreateGpsPointBody = Body(newPointFields, {
  example: {
    latitude: 53.5511,
    longitude: 9.9937,
    altitude: 12.5,
    heading: 90,
    timestamp: 1767225600,
    speed_kmh: 36,
    speed_mps: 10,
    speed_mph: 22.37,
    speed_knots: 19.44,
    hdop: 0.9,
  },
});

export const CurrentQuery = Type.Object({ device_id: Type.Optional(Uuid) });

/** Where a list of points continues after this one: its time, then its id (both lists end their order in id). */
export const keyOfPoint = (point: { timestamp: Date; id: string }) => ({ at: point.timestamp, id: point.id });

const RefusedPoint = Type.Object({
  index: Type.Integer({ description: 'Position of the point in the batch (NDJSON: its line), from 0' }),
  field: Type.String({ description: 'The field at fault, dotted; empty for the point itself' }),
  message: Type.String(),
});

export const BatchResult = named(
  'GpsBatchResult',
  Type.Object({
    stored: Type.Integer({ description: 'Points stored by this request' }),
    duplicates: Type.Integer({
      description: 'Points already stored (same device, time and position), not stored again',
    }),
    refused: Type.Array(RefusedPoint),
  }),
);

/** 400 of a batch: the error body, and with all_or_nothing the points that were refused. */
export const BatchRefusedBody = Type.Object(
  {
    error: Type.String(),
    message: Type.String(),
    code: Type.String(),
    refused: Type.Optional(Type.Array(RefusedPoint)),
  },
  {
    description: 'Codes: gps.batch_refused (all_or_nothing: nothing was stored; refused lists why), request.validation',
    'x-error-codes': ['gps.batch_refused', 'request.validation'],
  },
);

export const BatchQuery = Type.Object({
  all_or_nothing: Type.Optional(
    Type.Boolean({ default: false, description: 'Store nothing when any point is refused (400 with the list)' }),
  ),
});

const BATCH_EXAMPLE = [
  {
    latitude: 53.5511,
    longitude: 9.9937,
    altitude: 12.5,
    heading: 90,
    timestamp: 1767225600,
    speed_kmh: 36,
    speed_mps: 10,
    speed_mph: 22.37,
    speed_knots: 19.44,
  },
  {
    latitude: 53.5514,
    longitude: 9.9951,
    timestamp: 1767225610,
    speed_kmh: 0,
    speed_mps: 0,
    speed_mph: 0,
    speed_knots: 0,
    accuracy: 8,
    battery_level: 87,
  },
];

/**
 * Up to 10,000 points in the shape of POST /v1/gps. Items are checked one by one by the service (a bad point
 * is refused alone, not the whole batch), so the array's items are not validated here.
 */
export const BatchBody = Type.Array(Type.Unknown(), {
  maxItems: 10_000,
  description:
    'Points as POST /v1/gps takes them (GpsPointCreate), as a JSON array or as NDJSON (Content-Type: application/x-ndjson, one point per line)',
  examples: [BATCH_EXAMPLE],
});
