import { Type } from 'typebox';
import { Body, DateTime, named, Nullable, Uuid } from '../../platform/http/schemas.js';

export const Contact = named(
  'Contact',
  Type.Object({
    id: Uuid,
    location_id: Uuid,
    name: Type.String(),
    phone: Nullable(Type.String()),
    email: Nullable(Type.String()),
    role: Nullable(Type.String()),
    created_at: DateTime,
  }),
);

export const Location = named(
  'Location',
  Type.Object({
    id: Uuid,
    name: Type.String(),
    street: Nullable(Type.String()),
    zip: Nullable(Type.String()),
    city: Nullable(Type.String()),
    country: Nullable(Type.String()),
    latitude: Nullable(Type.Number()),
    longitude: Nullable(Type.Number()),
    notes: Nullable(Type.String()),
    is_active: Type.Boolean(),
    created_at: DateTime,
    updated_at: DateTime,
  }),
);

export const LocationWithContacts = named(
  'LocationWithContacts',
  Type.Object({ ...Location.properties, contacts: Type.Array(Contact) }),
);

const name = Type.String({ minLength: 1, maxLength: 200 });
const text = (maxLength: number) => Type.Optional(Nullable(Type.String({ maxLength })));

const contactFields = {
  phone: text(50),
  email: Type.Optional(Nullable(Type.String({ format: 'email', maxLength: 254 }))),
  role: text(100),
};

const locationFields = {
  street: text(200),
  zip: text(20),
  city: text(100),
  country: Type.Optional(
    Nullable(Type.String({ pattern: '^[A-Za-z]{2,3}$', description: 'ISO 3166-1 country code (alpha-2 or alpha-3)' })),
  ),
  latitude: Type.Optional(Nullable(Type.Number({ minimum: -90, maximum: 90 }))),
  longitude: Type.Optional(Nullable(Type.Number({ minimum: -180, maximum: 180 }))),
  notes: text(5000),
};

export const CreateContactBody = Body(
  { name, ...contactFields },
  { example: { name: 'Jana Weber', phone: '+49 40 1234567', email: 'jana.weber@example.org', role: 'Shift lead' } },
);
export const UpdateContactBody = Body(
  { name: Type.Optional(name), ...contactFields },
  { atLeastOne: true, example: { phone: '+49 40 7654321' } },
);

export const CreateLocationBody = Body(
  { name, ...locationFields, contacts: Type.Optional(Type.Array(CreateContactBody, { maxItems: 100 })) },
  {
    example: {
      name: 'Warehouse North',
      street: 'Hafenstraße 12',
      zip: '20457',
      city: 'Hamburg',
      country: 'DE',
      latitude: 53.5438,
      longitude: 9.9661,
      contacts: [{ name: 'Jana Weber', phone: '+49 40 1234567', role: 'Shift lead' }],
    },
  },
);
export const UpdateLocationBody = Body(
  { name: Type.Optional(name), ...locationFields, is_active: Type.Optional(Type.Boolean()) },
  { atLeastOne: true, example: { notes: 'Gate 3 after 18:00' } },
);

export const ContactParams = Type.Object({ id: Uuid, cid: Uuid });
