import { Type } from 'typebox';
import { Body, DateTime, named, Nullable, uuid, Uuid } from '../../platform/http/schemas.js';

const Level = Type.Union([Type.Literal('live'), Type.Literal('history'), Type.Literal('full')], {
  description:
    'live: the current position only; history: live and the points of the last history_days days (all without ' +
    'history_days); full: history and the device’s trips, geofences and exports',
});

export const Share = named(
  'DeviceShare',
  Type.Object({
    id: Uuid,
    owner_id: Uuid,
    owner_username: Nullable(Type.String({ description: 'Who shares (null: their account was removed)' })),
    /** null: every device of the owner, those added later too. */
    device_id: Nullable(Uuid),
    user_id: Nullable(Uuid),
    group_id: Nullable(Uuid),
    grantee_name: Nullable(Type.String({ description: "The user's username, or the group's name" })),
    level: Level,
    history_days: Nullable(Type.Integer()),
    expires_at: Nullable(DateTime),
    created_at: DateTime,
    updated_at: DateTime,
  }),
);

const HistoryDays = Type.Integer({ minimum: 1, maximum: 36_500, description: 'Days of history shown (default: all)' });
const ExpiresAt = Type.String({ format: 'date-time', description: 'When the share ends (default: never)' });

const shareFields = {
  user_id: Type.Optional(uuid({ description: 'Share with this user…' })),
  username: Type.Optional(
    Type.String({ minLength: 1, maxLength: 100, description: '…or with the user of this username…' }),
  ),
  group_id: Type.Optional(uuid({ description: '…or with every member of this group (one of yours)' })),
  level: Level,
  history_days: Type.Optional(Nullable(HistoryDays)),
  expires_at: Type.Optional(Nullable(ExpiresAt)),
};
const example = { user_id: '5f0c6f2e-8a0e-4c1b-9a53-2d7f1e0b6c11', level: 'history', history_days: 7 };

export const CreateShareBody = Body(shareFields, { example });

export const CreateOwnerShareBody = Body(
  {
    device_id: Type.Optional(uuid({ description: 'One device of yours; without it, every device of yours' })),
    ...shareFields,
  },
  { example: { ...example, level: 'live' } },
);

export const UpdateShareBody = Body(
  {
    level: Type.Optional(Level),
    history_days: Type.Optional(Nullable(HistoryDays)),
    expires_at: Type.Optional(Nullable(ExpiresAt)),
  },
  { atLeastOne: true, example: { expires_at: '2026-12-31T23:00:00Z' } },
);

export const SharesQuery = Type.Object({
  direction: Type.Optional(
    Type.Union([Type.Literal('incoming'), Type.Literal('outgoing')], {
      description: 'incoming: shared with me (directly or through a group); outgoing (default): what I share',
    }),
  ),
});

export const ShareParams = Type.Object({ id: Uuid, share_id: Uuid });

export const TransferBody = Body(
  { user_id: uuid({ description: 'The user who owns the device from now on' }) },
  { example: { user_id: '5f0c6f2e-8a0e-4c1b-9a53-2d7f1e0b6c11' } },
);
