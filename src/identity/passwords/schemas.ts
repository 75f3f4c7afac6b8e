import { Type } from 'typebox';
import { Body, TurnstileToken } from '../../platform/http/schemas.js';

/** A password a user chooses (registration, reset, change); the length rule is checked by the users module. */
export const NewPassword = (name: string) =>
  Type.String({ minLength: 1, maxLength: 1024, description: `${name}; at least 8 characters` });

export const ResetPasswordBody = Body(
  {
    email: Type.String({ minLength: 1, maxLength: 320 }),
    turnstile_token: TurnstileToken,
  },
  { example: { email: 'ada@example.org' } },
);

/** Asked with a new password: a stolen session may have added a passkey or created a key, which outlive the old password otherwise. */
const RevokePasskeysAndKeys = Type.Optional(
  Type.Boolean({
    default: false,
    description:
      'Also remove every passkey and API key of the account (system keys stay): what a stolen session may have left behind',
  }),
);

export const CompleteResetBody = Body(
  {
    token: Type.String({ minLength: 1, maxLength: 512 }),
    new_password: NewPassword('New password'),
    turnstile_token: TurnstileToken,
    revoke_passkeys_and_keys: RevokePasskeysAndKeys,
  },
  { example: { token: 'prt_4f9d2c7a1b8e4d3f9a6c5b2e1d0f7a8c', new_password: 'a-new-long-passphrase' } },
);

export const ChangePasswordBody = Body(
  {
    current_password: Type.String({ minLength: 1, maxLength: 1024, description: 'The password the account has now' }),
    new_password: NewPassword('New password'),
    revoke_passkeys_and_keys: RevokePasskeysAndKeys,
  },
  { example: { current_password: 'correct-horse-battery', new_password: 'a-new-long-passphrase' } },
);

export const PasswordChanged = Type.Object({
  message: Type.String(),
  other_sessions_ended: Type.Integer({
    minimum: 0,
    description: 'Sessions of yours other than this one that were signed out',
  }),
});
