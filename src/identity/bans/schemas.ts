import { Type, type Static } from 'typebox';
import { Body, DateTime, named, Nullable, Uuid } from '../../platform/http/schemas.js';

/** A hundred years: longer is what null (permanent) is for. */
const MAX_BAN_SECONDS = 100 * 365 * 86_400;

export const Ban = named(
  'Ban',
  Type.Object(
    {
      id: Uuid,
      user_id: Uuid,
      reason: Nullable(Type.String()),
      banned_by: Nullable(Uuid),
      banned_at: DateTime,
      expires_at: Nullable(DateTime),
      is_permanent: Type.Boolean(),
    },
    {
      examples: [
        {
          id: '3c9d1e2f-4a5b-4c6d-8e7f-0a1b2c3d4e5f',
          user_id: '0b8e9f10-1a2b-4c3d-9e4f-5a6b7c8d9e0f',
          reason: 'spam',
          banned_by: '7d6c5b4a-3f2e-4d1c-8b0a-9f8e7d6c5b4a',
          banned_at: '2026-11-25T09:30:00.000Z',
          expires_at: '2026-12-02T09:30:00.000Z',
          is_permanent: false,
        },
      ],
    },
  ),
);

export const BanHistoryEntry = named(
  'BanHistoryEntry',
  Type.Object({
    ...Ban.properties,
    unbanned_at: Nullable(DateTime),
    unbanned_by: Nullable(Uuid),
  }),
);

export const BanBody = Body(
  {
    reason: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
    duration_seconds: Type.Optional(
      Nullable(
        Type.Integer({
          minimum: 1,
          maximum: MAX_BAN_SECONDS,
          description: 'How long the ban lasts; null or absent: permanent',
        }),
      ),
    ),
  },
  { example: { reason: 'Spam in the community chat', duration_seconds: 86400 } },
);
export type BanInput = Static<typeof BanBody>;

export const BanStatus = Type.Object({ is_banned: Type.Boolean(), active_ban: Nullable(Ban) });
export const BanData = Type.Object({ data: Ban });
export const BanHistory = Type.Object({ data: Type.Array(BanHistoryEntry) });
