import { Type } from 'typebox';
import { Body, DateTime, named, Nullable, uuid, Uuid } from '../../platform/http/schemas.js';

export const GpsPoint = named('GpsPoint', Type.Object({
  id: Uuid,
  device_id: Type.Optional(uuid({ description: 'Present when the point belongs to a device' })),
  trip_id: Nullable(Uuid),
  latitude: Type.Number(),
  longitude: Type.Number(),
  altitude: Nullable(Type.Number()),
  heading: Nullable(Type.Number()),
  timestamp: DateTime,
  speed_kmh: Type.Number(),
  speed_mps: Type.Number(),
  speed_mph: Type.Number(),
  speed_knots: Type.Number(),
  pdop: Nullable(Type.Number()),
  hdop: Nullable(Type.Number()),
  vdop: Nullable(Type.Number()),
  created_at: DateTime,
}));

const speed = Type.Number({ minimum: 0 });
const dop = Type.Optional(Nullable(Type.Number({ minimum: 0 })));

export const CreateGpsPointBody = Body({
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
}, { example: { latitude: 53.5511, longitude: 9.9937, altitude: 12.5, heading: 90, timestamp: 1767225600, speed_kmh: 36, speed_mps: 10, speed_mph: 22.37, speed_knots: 19.44, hdop: 0.9 } });

export const CurrentQuery = Type.Object({ device_id: Type.Optional(Uuid) });

/** Where a list of points continues after this one: its time, then its id (both lists end their order in id). */
export const keyOfPoint = (point: { timestamp: Date; id: string }) => ({ at: point.timestamp, id: point.id });
