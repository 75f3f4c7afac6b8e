import { Type, type Static } from 'typebox';
import { Body, DateTime, Nullable, Uuid } from '../../platform/http/schemas.js';

/** A hundred years: longer is what null (permanent) is for. */
const MAX_BAN_SECONDS = 100 * 365 * 86_400;

export const Ban = Type.Object({
  id: Uuid,
  user_id: Uuid,
  reason: Nullable(Type.String()),
  banned_by: Nullable(Uuid),
  banned_at: DateTime,
  expires_at: Nullable(DateTime),
  is_permanent: Type.Boolean(),
});

export const BanHistoryEntry = Type.Object({
  ...Ban.properties,
  unbanned_at: Nullable(DateTime),
  unbanned_by: Nullable(Uuid),
});

export const BanBody = Body({
  reason: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
  duration_seconds: Type.Optional(
    Nullable(Type.Integer({ minimum: 1, maximum: MAX_BAN_SECONDS, description: 'How long the ban lasts; null or absent: permanent' })),
  ),
});
export type BanInput = Static<typeof BanBody>;

export const BanStatus = Type.Object({ is_banned: Type.Boolean(), active_ban: Nullable(Ban) });
export const BanData = Type.Object({ data: Ban });
export const BanHistory = Type.Object({ data: Type.Array(BanHistoryEntry) });
export const Success = Type.Object({ success: Type.Boolean(), message: Type.String() });
