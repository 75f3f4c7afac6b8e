import { Type } from 'typebox';
import { Body, DateTime, named, Nullable, Uuid } from '../../platform/http/schemas.js';

/** Any JSON object (arrays, strings and null are refused). */
const Metadata = Type.Unsafe<Record<string, unknown>>({
  type: 'object',
  additionalProperties: true,
  description: 'Free JSON object',
});

export const Geofence = named(
  'Geofence',
  Type.Object({
    id: Uuid,
    name: Type.String(),
    description: Nullable(Type.String()),
    latitude: Type.Number(),
    longitude: Type.Number(),
    radius_km: Type.Number(),
    is_active: Type.Boolean(),
    metadata: Metadata,
    created_at: DateTime,
    updated_at: DateTime,
  }),
);

const required = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  latitude: Type.Number({ minimum: -90, maximum: 90 }),
  longitude: Type.Number({ minimum: -180, maximum: 180 }),
  radius_km: Type.Number({ exclusiveMinimum: 0, description: 'Radius in kilometres, greater than 0' }),
};

const optional = {
  description: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
  metadata: Type.Optional(Metadata),
};

export const CreateGeofenceBody = Body(
  { ...required, ...optional },
  {
    example: {
      name: 'Depot',
      latitude: 53.5438,
      longitude: 9.9661,
      radius_km: 0.5,
      description: 'Alert when a van leaves the depot',
    },
  },
);

export const UpdateGeofenceBody = Body(
  {
    name: Type.Optional(required.name),
    latitude: Type.Optional(required.latitude),
    longitude: Type.Optional(required.longitude),
    radius_km: Type.Optional(required.radius_km),
    ...optional,
    is_active: Type.Optional(Type.Boolean()),
  },
  { atLeastOne: true, example: { radius_km: 0.75 } },
);
