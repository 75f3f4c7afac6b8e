import { Type } from 'typebox';
import { Body, DateTime, named, Nullable, TurnstileToken } from '../../platform/http/schemas.js';
import { NewPassword } from '../passwords/schemas.js';

export const LoginBody = Body({
  identifier: Type.String({ minLength: 1, maxLength: 320, description: 'Username or email (case-insensitive)' }),
  password: Type.String({ minLength: 1, maxLength: 1024 }),
  turnstile_token: Type.Optional(Type.String({ maxLength: 4096 })),
}, { example: { identifier: 'ada@example.org', password: 'correct-horse-battery' } });

export const AuthResponse = named('SignIn', Type.Object({
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
}));


export const RegisterBody = Body({
  email: Type.String({ minLength: 3, maxLength: 320, description: 'Stored lower case' }),
  username: Type.String({ minLength: 1, maxLength: 64, description: '3-30 letters, digits, underscores; stored lower case' }),
  password: NewPassword('Password'),
  turnstile_token: TurnstileToken,
}, { example: { email: 'ada@example.org', username: 'ada', password: 'correct-horse-battery' } });

export const TokenBody = Body({ token: Type.String({ minLength: 1, maxLength: 512 }) }, { example: { token: 'evt_4f9d2c7a1b8e4d3f9a6c5b2e1d0f7a8c' } });

export const Registered = Type.Object({ message: Type.String(), expires_at: DateTime });

export const VerifiedEmail = Type.Object({
  success: Type.Boolean(),
  message: Type.String(),
  verification_type: Type.Union([Type.Literal('registration'), Type.Literal('email_link'), Type.Literal('email_change')]),
  user_id: Type.String(),
  redirect_url: Type.String(),
});

export const DeleteMyAccountBody = Body({
  current_password: Type.Optional(Type.String({
    minLength: 1, maxLength: 1024, description: 'Required when the account has a password; an account without one needs a sign-in of the last 15 minutes instead',
  })),
}, { example: { current_password: 'correct-horse-battery' } });

export const AccountDeletionScheduled = Type.Object({
  message: Type.String(),
  scheduled_deletion_at: DateTime,
}, { description: 'Until scheduled_deletion_at an administrator can still restore the account' });

/** Shows who a session is again before a change a stolen session must not make alone (a new passkey or API key). */
export const ReauthenticationPassword = Type.Optional(Type.String({
  minLength: 1, maxLength: 1024,
  description: 'A session signed in more than 15 minutes ago gives its current password (or signs in again); API keys leave it out',
}));

export const ReauthenticationBody = Body({ current_password: ReauthenticationPassword }, { example: { current_password: 'correct-horse-battery' } });
