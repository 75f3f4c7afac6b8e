import { Type } from 'typebox';
import { Body, DateTime, named, Nullable, Uuid } from '../../platform/http/schemas.js';

export const PlatformAccount = named('PlatformAccount', Type.Object({
  id: Uuid,
  platform_id: Uuid,
  platform_name: Type.String(),
  platform_slug: Type.String(),
  platform_user_id: Type.String({ description: "The user's id on the platform; for the email platform the address" }),
  is_oauth: Type.Boolean(),
  is_primary: Type.Boolean(),
  username: Nullable(Type.String()),
  email: Nullable(Type.String()),
  avatar_url: Nullable(Type.String()),
  created_at: DateTime,
  updated_at: DateTime,
}));

export const AccountParams = Type.Object({ id: Uuid, account_id: Uuid });

export const EmailLinkRequestBody = Body({
  email: Type.String({ minLength: 1, maxLength: 254 }),
  password: Type.String({ minLength: 8, maxLength: 1024, description: 'Password of the new email sign-in; at least 8 characters' }),
}, { example: { email: 'ada@example.org', password: 'correct-horse-battery' } });

export const TokenBody = Body({ token: Type.String({ minLength: 1, maxLength: 512 }) }, { example: { token: 'elt_4f9d2c7a1b8e4d3f9a6c5b2e1d0f7a8c' } });

export const EmailLinked = Type.Object({ message: Type.String(), platform_account_id: Uuid });

export const PendingEmailLink = Type.Object({
  pending: Type.Boolean(),
  email: Nullable(Type.String()),
  expires_at: Nullable(DateTime),
});
