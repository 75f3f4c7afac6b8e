import { Type } from 'typebox';
import { Body, DateTime, TurnstileToken } from '../../platform/http/schemas.js';
import { NewPassword } from '../passwords/schemas.js';

export const RegisterBody = Body(
  {
    email: Type.String({ minLength: 3, maxLength: 320, description: 'Stored lower case' }),
    username: Type.String({
      minLength: 1,
      maxLength: 64,
      description: '3-30 letters, digits, underscores; stored lower case',
    }),
    password: NewPassword('Password'),
    turnstile_token: TurnstileToken,
  },
  { example: { email: 'ada@example.org', username: 'ada', password: 'correct-horse-battery' } },
);

export const TokenBody = Body(
  { token: Type.String({ minLength: 1, maxLength: 512 }) },
  { example: { token: 'evt_4f9d2c7a1b8e4d3f9a6c5b2e1d0f7a8c' } },
);

export const Registered = Type.Object({ message: Type.String(), expires_at: DateTime });

export const VerifiedEmail = Type.Object({
  success: Type.Boolean(),
  message: Type.String(),
  verification_type: Type.Union([
    Type.Literal('registration'),
    Type.Literal('email_link'),
    Type.Literal('email_change'),
  ]),
  user_id: Type.String(),
  redirect_url: Type.String(),
});
