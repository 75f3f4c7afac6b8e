import { Type } from 'typebox';
import { Body, DateTime, named, Nullable, uuid, Uuid } from '../../platform/http/schemas.js';

export const TripCategory = named(
  'TripCategory',
  Type.Object({
    id: Uuid,
    parent_id: Nullable(Uuid),
    name: Type.String(),
    description: Nullable(Type.String()),
    color: Nullable(Type.String()),
    is_active: Type.Boolean(),
    sort_order: Type.Integer(),
    created_at: DateTime,
    updated_at: DateTime,
  }),
);

const name = Type.String({ minLength: 1, maxLength: 200 });

const fields = {
  parent_id: Type.Optional(Nullable(uuid({ description: 'Parent category; null or absent: top level' }))),
  description: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
  color: Type.Optional(
    Nullable(Type.String({ pattern: '^#[0-9a-fA-F]{6}$', description: 'Hex colour, e.g. #1a2b3c' })),
  ),
  sort_order: Type.Optional(Type.Integer({ minimum: -2147483648, maximum: 2147483647 })),
};

export const CreateTripCategoryBody = Body(
  { name, ...fields },
  { example: { name: 'Deliveries', color: '#1e90ff', sort_order: 10 } },
);

export const UpdateTripCategoryBody = Body(
  { name: Type.Optional(name), ...fields, is_active: Type.Optional(Type.Boolean()) },
  { atLeastOne: true, example: { color: '#ff8c00' } },
);
