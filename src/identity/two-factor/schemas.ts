import { Type } from 'typebox';
import { Body, DateTime, named, Nullable, uuid, Uuid } from '../../platform/http/schemas.js';

const UserId = Type.Optional(
  uuid({ description: 'The user acted on; required with the system key, default: yourself' }),
);
const TotpCode = Type.String({ pattern: '^[0-9]{6}$', description: '6-digit code from the authenticator app' });
const AnyCode = Type.String({
  minLength: 1,
  maxLength: 64,
  description: '6-digit code from the authenticator app, or a backup code',
});

export const UserIdQuery = Type.Object({ user_id: UserId });

export const SetupBody = Body(
  {
    user_id: UserId,
    platform_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, description: 'Platform id or slug; default: the email platform' }),
    ),
  },
  { example: {} },
);
export const TotpBody = Body({ user_id: UserId, code: TotpCode }, { example: { code: '492039' } });
export const AnyCodeBody = Body({ user_id: UserId, code: AnyCode }, { example: { code: '492039' } });

export const TwoFactorStatus = named(
  'TwoFactorStatus',
  Type.Object({
    enabled: Type.Boolean(),
    enabled_at: Nullable(DateTime),
    backup_codes_remaining: Type.Integer(),
    platform_slug: Nullable(Type.String({ description: 'Platform the 2FA was set up for; null when never set up' })),
  }),
);

export const TwoFactorRequirement = Type.Object({
  required: Type.Boolean(),
  enabled: Type.Boolean(),
  reason: Nullable(Type.String({ description: 'Which role or platform requires it; null when not required' })),
  passkeys: Type.Integer({
    minimum: 0,
    description: 'Passkeys of the user that verify the user (PIN, biometrics): each signs in with two factors at once',
  }),
  satisfied: Type.Boolean({ description: 'TOTP is on, or the user has such a passkey' }),
});

export const TwoFactorSetup = Type.Object({
  secret: Type.String({ description: 'TOTP secret, base32' }),
  qr_code_url: Type.String({ description: 'otpauth:// URL' }),
  qr_code_image: Type.String({ description: 'PNG QR code of qr_code_url as a data: URL' }),
  expires_at: DateTime,
  platform_slug: Type.String(),
});

export const BackupCodesIssued = Type.Object({
  success: Type.Boolean(),
  backup_codes: Type.Array(Type.String(), { description: 'Shown only in this response' }),
  message: Type.String(),
});

export const VerifyLoginBody = Body(
  {
    temp_token: Type.String({ minLength: 1, maxLength: 512, description: '2fa_… token from the login response' }),
    code: AnyCode,
  },
  { example: { temp_token: '2fa_9c8b7a6d5e4f3a2b1c0d9e8f7a6b5c4d', code: '492039' } },
);

export const CheckBody = Body(
  {
    user_id: Uuid,
    oauth_provider: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, description: 'Provider slug the session will carry' }),
    ),
  },
  { example: { user_id: '3f1c2a9e-8b7d-4c5e-9a1f-2b3c4d5e6f70', oauth_provider: 'discord' } },
);

export const CheckResult = Type.Object({
  requires_2fa: Type.Boolean(),
  temp_token: Type.Optional(Type.String({ description: '2fa_…; only when requires_2fa is true' })),
});
