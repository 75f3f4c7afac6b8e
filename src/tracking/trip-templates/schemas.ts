import { Type } from 'typebox';
import { Body, DateTime, named, Nullable, Uuid } from '../../platform/http/schemas.js';
import { tripFields } from '../trips/schemas.js';

export const TripTemplate = named(
  'TripTemplate',
  Type.Object({
    id: Uuid,
    name: Type.String(),
    description: Nullable(Type.String()),
    category_id: Nullable(Uuid),
    origin_id: Nullable(Uuid),
    destination_id: Nullable(Uuid),
    device_id: Nullable(Uuid),
    gps_logging_enabled: Type.Boolean(),
    default_weight_kg: Nullable(Type.Number()),
    notes: Nullable(Type.String()),
    tags: Type.Array(Type.String()),
    created_at: DateTime,
    updated_at: DateTime,
  }),
);

// The same limits as the trip fields they become.
const { weight_kg: weight, ...copied } = tripFields;
// 184 + ' (from template)' stays within the 200 characters of a trip name.
const name = Type.String({
  minLength: 1,
  maxLength: 184,
  description: "The trip's name is this followed by ' (from template)'",
});

export const CreateTripTemplateBody = Body(
  { name, ...copied, default_weight_kg: weight },
  {
    example: {
      name: 'Morning delivery round',
      gps_logging_enabled: true,
      device_id: '7a2b3c4d-5e6f-4a8b-9c0d-1e2f3a4b5c6d',
      tags: ['delivery'],
      default_weight_kg: 450,
    },
  },
);

export const UpdateTripTemplateBody = Body(
  { name: Type.Optional(name), ...copied, default_weight_kg: weight },
  { example: { default_weight_kg: 500 } },
);

export const CreateTripFromTemplateBody = Body(
  { weight_kg: Type.Number({ minimum: 0 }) },
  { example: { weight_kg: 420.5 } },
);
