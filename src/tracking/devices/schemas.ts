import { Type } from 'typebox';
import { Body, DateTime, named, Nullable, uuid, Uuid } from '../../platform/http/schemas.js';

export const Device = named(
  'Device',
  Type.Object({
    id: Uuid,
    name: Type.String(),
    description: Nullable(Type.String()),
    device_type: Nullable(Type.String()),
    is_active: Type.Boolean(),
    is_public: Type.Boolean({
      description: 'Live positions go to anyone on the WebSocket vessels channel, signed in or not',
    }),
    api_key_id: Nullable(Uuid),
    owner_id: Nullable(Uuid),
    created_at: DateTime,
    updated_at: DateTime,
  }),
);

const fields = {
  description: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
  device_type: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
  is_public: Type.Optional(
    Type.Boolean({
      description: 'Show live positions to anonymous subscribers of the vessels channel (default false)',
    }),
  ),
  api_key_id: Type.Optional(uuid({ description: 'Link this API key to the device: a key you own, or a system key' })),
};

export const CreateDeviceBody = Body(
  { name: Type.String({ minLength: 1, maxLength: 200 }), ...fields },
  { example: { name: 'Van 3', description: 'Ford Transit, HH-WG 303', device_type: 'vehicle_tracker' } },
);

export const UpdateDeviceBody = Body(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    ...fields,
    is_active: Type.Optional(Type.Boolean()),
  },
  { atLeastOne: true, example: { is_active: false } },
);
