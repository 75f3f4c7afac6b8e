import { Type } from 'typebox';
import { Body, DateTime, named, Nullable } from '../../platform/http/schemas.js';

export const LoginBody = Body(
  {
    identifier: Type.String({ minLength: 1, maxLength: 320, description: 'Username or email (case-insensitive)' }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
    turnstile_token: Type.Optional(Type.String({ maxLength: 4096 })),
  },
  { example: { identifier: 'ada@example.org', password: 'correct-horse-battery' } },
);

export const AuthResponse = named(
  'SignIn',
  Type.Object({
    user_id: Type.String(),
    email: Type.String(),
    username: Type.String(),
    session_token: Type.Optional(Nullable(Type.String({ description: 'ses_…; omitted when 2FA is required' }))),
    session_id: Type.Optional(Nullable(Type.String())),
    expires_at: Type.Optional(Nullable(DateTime)),
    provider: Nullable(Type.String()),
    requires_2fa: Type.Boolean(),
    temp_token: Type.Optional(Nullable(Type.String({ description: '2fa_…; only when requires_2fa is true' }))),
    preferred_locale: Nullable(Type.String()),
  }),
);

/** Shows who a session is again before a change a stolen session must not make alone (a new passkey or API key). */
export const ReauthenticationPassword = Type.Optional(
  Type.String({
    minLength: 1,
    maxLength: 1024,
    description:
      'A session signed in more than 15 minutes ago gives its current password (or signs in again); API keys leave it out',
  }),
);

export const ReauthenticationBody = Body(
  { current_password: ReauthenticationPassword },
  { example: { current_password: 'correct-horse-battery' } },
);
