import { Type } from 'typebox';
import { Body, DateTime } from '../../platform/http/schemas.js';

export const DeleteMyAccountBody = Body(
  {
    current_password: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1024,
        description:
          'Required when the account has a password; an account without one needs a sign-in of the last 15 minutes instead',
      }),
    ),
  },
  { example: { current_password: 'correct-horse-battery' } },
);

export const AccountDeletionScheduled = Type.Object(
  {
    message: Type.String(),
    scheduled_deletion_at: DateTime,
  },
  { description: 'Until scheduled_deletion_at an administrator can still restore the account' },
);
