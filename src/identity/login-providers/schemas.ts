import { Type } from 'typebox';
import { Body, DateTime, named, Uuid } from '../../platform/http/schemas.js';

export const Platform = named(
  'Platform',
  Type.Object({
    id: Uuid,
    name: Type.String(),
    slug: Type.String(),
    is_oauth: Type.Boolean(),
    enabled: Type.Boolean({ description: 'false: no new logins or registrations through this platform' }),
    two_factor_supported: Type.Boolean(),
    two_factor_required: Type.Boolean(),
    registration_enabled: Type.Boolean({
      description: 'New users may sign up through this platform (when it is enabled)',
    }),
    created_at: DateTime,
    updated_at: DateTime,
  }),
);

export const PlatformParams = Type.Object({
  id_or_slug: Type.String({ minLength: 1, maxLength: 100, description: 'Platform UUID or slug (e.g. email)' }),
});

export const PlatformList = Type.Object({ data: Type.Array(Platform) });
export const PlatformData = Type.Object({ data: Platform });

export const EnabledBody = Body({ enabled: Type.Boolean() }, { example: { enabled: true } });

export const SettingsBody = Body(
  {
    enabled: Type.Optional(Type.Boolean()),
    two_factor_required: Type.Optional(Type.Boolean()),
    registration_enabled: Type.Optional(Type.Boolean()),
  },
  { example: { registration_enabled: false, two_factor_required: true } },
);

export const SettingsResult = Type.Object({ success: Type.Boolean(), message: Type.String(), platform: Platform });
