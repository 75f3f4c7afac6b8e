import { Type } from 'typebox';
import { Body, DateTime, named, Nullable, Uuid } from '../../platform/http/schemas.js';
import { MAX_POLYGON_POSITIONS, MAX_POLYGON_RINGS, type PolygonGeometry } from './geometry.js';

/** Any JSON object (arrays, strings and null are refused). */
const Metadata = Type.Unsafe<Record<string, unknown>>({
  type: 'object',
  additionalProperties: true,
  description: 'Free JSON object',
});

/** A GeoJSON Polygon geometry (RFC 7946 3.1.6): closed rings of [longitude, latitude], the first the outer one. */
export const Polygon = named(
  'GeofencePolygon',
  Type.Unsafe<PolygonGeometry>(
    Type.Object(
      {
        type: Type.Literal('Polygon'),
        coordinates: Type.Array(
          Type.Array(Type.Array(Type.Number(), { minItems: 2, maxItems: 3 }), {
            minItems: 4,
            maxItems: MAX_POLYGON_POSITIONS,
          }),
          { minItems: 1, maxItems: MAX_POLYGON_RINGS },
        ),
      },
      {
        additionalProperties: false,
        description:
          'GeoJSON Polygon: the outer ring, then holes; each ring closed with at least 4 positions, at most 1,000 positions in all',
      },
    ),
  ),
);

const DwellMinutes = Type.Integer({
  minimum: 1,
  maximum: 10080,
  description: 'Minutes inside after which geofence_dwell fires, once per stay (null: never)',
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
    polygon: Nullable(Polygon),
    dwell_minutes: Nullable(DwellMinutes),
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
  dwell_minutes: Type.Optional(Nullable(DwellMinutes)),
};

/**
 * A circle needs latitude, longitude and radius_km (the spec's required fields; the service answers 400
 * "Body field 'latitude' is required" as the schema would); with a polygon they are computed from it (its
 * centre and enclosing radius) and any sent are ignored.
 */
export const CreateGeofenceBody = Body(
  {
    name: required.name,
    latitude: Type.Optional(required.latitude),
    longitude: Type.Optional(required.longitude),
    radius_km: Type.Optional(required.radius_km),
    ...optional,
    polygon: Type.Optional(Polygon),
  },
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
    polygon: Type.Optional(Nullable(Polygon)),
    is_active: Type.Optional(Type.Boolean()),
  },
  { atLeastOne: true, example: { radius_km: 0.75 } },
);
