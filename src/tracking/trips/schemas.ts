import { Type } from 'typebox';
import { Body, DateTime, named, Nullable, uuid, Uuid } from '../../platform/http/schemas.js';

export const TripStatus = Type.Union([
  Type.Literal('draft'),
  Type.Literal('active'),
  Type.Literal('paused'),
  Type.Literal('completed'),
]);

const Latitude = Nullable(Type.Number({ minimum: -90, maximum: 90 }));
const Longitude = Nullable(Type.Number({ minimum: -180, maximum: 180 }));

export const Trip = named(
  'Trip',
  Type.Object({
    id: Uuid,
    name: Type.String(),
    description: Nullable(Type.String()),
    status: TripStatus,
    gps_logging_enabled: Type.Boolean(),
    device_id: Nullable(Uuid),
    category_id: Nullable(Uuid),
    origin_id: Nullable(Uuid),
    destination_id: Nullable(Uuid),
    weight_kg: Nullable(Type.Number()),
    notes: Nullable(Type.String()),
    tags: Type.Array(Type.String()),
    start_latitude: Latitude,
    start_longitude: Longitude,
    end_latitude: Latitude,
    end_longitude: Longitude,
    started_at: Nullable(DateTime),
    ended_at: Nullable(DateTime),
    created_at: DateTime,
    updated_at: DateTime,
  }),
);

export const TripHistoryEntry = named(
  'TripHistoryEntry',
  Type.Object({
    id: Uuid,
    trip_id: Uuid,
    old_status: TripStatus,
    new_status: TripStatus,
    changed_by: Nullable(Uuid),
    latitude: Nullable(Type.Number()),
    longitude: Nullable(Type.Number()),
    changed_at: DateTime,
  }),
);

const reference = (what: string) => Type.Optional(Nullable(uuid({ description: what })));

export const tripFields = {
  description: Type.Optional(Nullable(Type.String({ maxLength: 5000 }))),
  gps_logging_enabled: Type.Optional(Type.Boolean()),
  device_id: reference('Device whose points the trip logs'),
  category_id: reference('Trip category'),
  origin_id: reference('Location the trip starts at'),
  destination_id: reference('Location the trip goes to'),
  weight_kg: Type.Optional(Nullable(Type.Number({ minimum: 0 }))),
  notes: Type.Optional(Nullable(Type.String({ maxLength: 5000 }))),
  tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 100 })),
};

const name = Type.String({ minLength: 1, maxLength: 200 });

export const CreateTripBody = Body(
  { name, ...tripFields },
  {
    example: {
      name: 'Hamburg to Berlin',
      gps_logging_enabled: true,
      device_id: '7a2b3c4d-5e6f-4a8b-9c0d-1e2f3a4b5c6d',
      weight_kg: 1200,
      tags: ['delivery'],
    },
  },
);

export const UpdateTripBody = Body(
  {
    name: Type.Optional(name),
    ...tripFields,
    status: Type.Optional(TripStatus),
    start_latitude: Type.Optional(Latitude),
    start_longitude: Type.Optional(Longitude),
    end_latitude: Type.Optional(Latitude),
    end_longitude: Type.Optional(Longitude),
  },
  { atLeastOne: true, example: { status: 'active', start_latitude: 53.5511, start_longitude: 9.9937 } },
);

export const TripListQuery = Type.Object({ status: Type.Optional(TripStatus) });
