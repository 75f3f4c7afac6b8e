import { Type } from 'typebox';
import { DateTime, named, Nullable, uuid, Uuid } from '../../platform/http/schemas.js';
import { KeysetPageQuery } from '../../platform/http/keyset.js';

export const EVENT_TYPES = [
  'geofence_enter',
  'geofence_exit',
  'geofence_dwell',
  'device_offline',
  'device_online',
  'overspeed',
  'low_battery',
  'sos',
] as const;

const EventType = Type.Unsafe<(typeof EVENT_TYPES)[number]>({
  type: 'string',
  enum: [...EVENT_TYPES],
  description: 'What happened (docs/events.md)',
});

export const Event = named(
  'Event',
  Type.Object({
    id: Uuid,
    type: EventType,
    device_id: Uuid,
    geofence_id: Nullable(
      uuid({ description: 'The geofence (null: a region the device named that no geofence of it is, or deleted)' }),
    ),
    occurred_at: DateTime,
    source: Type.Union([Type.Literal('server'), Type.Literal('device')], {
      description: 'server: evaluated from the points; device: reported by the tracker app (OwnTracks transition)',
    }),
    latitude: Nullable(Type.Number()),
    longitude: Nullable(Type.Number()),
    details: Type.Unsafe<Record<string, unknown>>({
      type: 'object',
      additionalProperties: true,
      description: 'geofence_name; point_id and accuracy of the point (server); the app message (device)',
    }),
    created_at: DateTime,
  }),
);

export const EventsQuery = Type.Object({
  ...KeysetPageQuery(50).properties,
  device_id: Type.Optional(uuid({ description: 'Events of this device only' })),
  geofence_id: Type.Optional(uuid({ description: 'Events of this geofence only' })),
  type: Type.Optional(EventType),
  from: Type.Optional(Type.String({ format: 'date-time', description: 'Events at or after this time' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'Events at or before this time' })),
});

export const keyOfEvent = (event: { occurred_at: Date; id: string }) => ({ at: event.occurred_at, id: event.id });
