import { Type } from 'typebox';
import { Body, named } from '../../platform/http/schemas.js';

export const NoticeSettings = named(
  'SecurityNotificationSettings',
  Type.Object(
    {
      new_sign_in: Type.Boolean({ description: 'Mail on a sign-in from a browser and network not seen before' }),
      new_api_key: Type.Boolean({ description: 'Mail when an API key is created for you' }),
    },
    {
      description:
        'The security notices that can be turned off; the others (password, email, two-factor, passkeys, ban, deletion) are always sent',
    },
  ),
);

export const NoticeSettingsBody = Body(
  {
    new_sign_in: Type.Optional(Type.Boolean()),
    new_api_key: Type.Optional(Type.Boolean()),
  },
  { atLeastOne: true, example: { new_sign_in: false } },
);
