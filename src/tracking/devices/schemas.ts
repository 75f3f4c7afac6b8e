import { Type } from 'typebox';
import { Body, DateTime, named, Nullable, uuid, Uuid } from '../../platform/http/schemas.js';

/** What a device's marker shows. */
const DeviceIcon = Type.Union(
  [
    Type.Literal('car'),
    Type.Literal('van'),
    Type.Literal('boat'),
    Type.Literal('person'),
    Type.Literal('bike'),
    Type.Literal('generic'),
  ],
  { description: 'Its marker on the map (default generic)' },
);

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
    color: Nullable(Type.String({ description: 'Its colour on the map, #rrggbb; null: the console picks one' })),
    icon: DeviceIcon,
    api_key_id: Nullable(Uuid),
    owner_id: Nullable(Uuid),
    offline_after_minutes: Nullable(
      Type.Integer({ description: 'Minutes without a point after which the device is offline; null: never' }),
    ),
    speed_limit_kmh: Nullable(
      Type.Number({ description: 'Points faster than this (km/h) are overspeeds; null: none' }),
    ),
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
  color: Type.Optional(
    Nullable(
      Type.String({
        pattern: '^#[0-9A-Fa-f]{6}$',
        description: 'A CSS hex colour, #rrggbb (kept in lower case); null: the console picks one',
      }),
    ),
  ),
  icon: Type.Optional(DeviceIcon),
  offline_after_minutes: Type.Optional(
    Nullable(
      Type.Integer({
        minimum: 1,
        maximum: 43_200,
        description: 'Minutes without a point after which the device is offline (an event); null: never (default)',
      }),
    ),
  ),
  speed_limit_kmh: Type.Optional(
    Nullable(
      Type.Number({
        exclusiveMinimum: 0,
        maximum: 2000,
        description: 'A point faster than this (km/h) is an overspeed (an event); null: no limit (default)',
      }),
    ),
  ),
  api_key_id: Type.Optional(uuid({ description: 'Link this API key to the device: a key you own, or a system key' })),
};

export const CreateDeviceBody = Body(
  { name: Type.String({ minLength: 1, maxLength: 200 }), ...fields },
  {
    example: {
      name: 'Van 3',
      description: 'Ford Transit, HH-WG 303',
      device_type: 'vehicle_tracker',
      color: '#1f6feb',
      icon: 'van',
    },
  },
);

export const UpdateDeviceBody = Body(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    ...fields,
    is_active: Type.Optional(Type.Boolean()),
  },
  { atLeastOne: true, example: { is_active: false } },
);

/** POST /v1/devices/{id}/key (the body is optional). */
export const ReplaceKeyBody = Body(
  {
    current_password: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1024,
        description:
          'A session signed in more than 15 minutes ago gives its current password (or signs in again); API keys leave it out',
      }),
    ),
  },
  { example: { current_password: 'correct-horse-battery' } },
);

export const NewDeviceKey = named(
  'NewDeviceKey',
  Type.Object({
    id: Uuid,
    key: Type.String({ description: 'The full key: shown only now' }),
    key_prefix: Type.String({ description: 'The first characters of the key, to recognise it' }),
    name: Type.String(),
    scopes: Type.Array(Type.String()),
    user_id: Nullable(Uuid),
    expires_at: Nullable(DateTime),
    device: Device,
    revoked_key_id: Nullable(uuid({ description: 'The key the device reported with, now revoked; null: it had none' })),
  }),
);

/** Devices in a map's page: the most one answer holds (a few MB of JSON at most, serialised in one go). */
export const MAP_DEVICES_PAGE = 5000;

export const MapDevicesQuery = Type.Object({
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: MAP_DEVICES_PAGE, description: 'Devices per page (default and most 5,000)' }),
  ),
  after: Type.Optional(
    uuid({ description: "The id a page's `next` gave: answers the devices after it (leave out for the first page)" }),
  ),
});

export const MapDevicesPage = Type.Object({
  data: Type.Array(Device),
  next: Nullable(uuid({ description: 'Pass as `after` for the next page; null: this was the last' })),
});
