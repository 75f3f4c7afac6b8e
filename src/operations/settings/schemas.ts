import { Type } from 'typebox';
import { Body, DateTime, named, Nullable } from '../../platform/http/schemas.js';

// "public" would collide with GET /v1/settings/public.
const KEY_PATTERN = '^(?!public$)[a-z0-9][a-z0-9_.-]{0,99}$';

export const SettingKeyParams = Type.Object({ key: Type.String({ pattern: KEY_PATTERN }) });
export const ConfigKeyParams = Type.Object({ key: Type.String({ minLength: 1, maxLength: 200 }) });

const AnyJson = Type.Unknown({ description: 'Any JSON value' });

export const Setting = named(
  'Setting',
  Type.Object({
    key: Type.String(),
    value: AnyJson,
    description: Nullable(Type.String()),
    is_public: Type.Boolean({ description: 'Listed by the unauthenticated GET /v1/settings/public' }),
    created_at: DateTime,
    updated_at: DateTime,
  }),
);

export const CreateSettingBody = Body(
  {
    key: Type.String({ pattern: KEY_PATTERN, description: 'Lower case letters, digits, . _ -; not "public"' }),
    value: AnyJson,
    description: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
    is_public: Type.Optional(Type.Boolean()),
  },
  {
    example: {
      key: 'fleet.default_speed_unit',
      value: 'kmh',
      description: 'Unit shown in the dashboard',
      is_public: true,
    },
  },
);

export const PutSettingBody = Body(
  {
    value: AnyJson,
    description: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
    is_public: Type.Optional(Type.Boolean()),
  },
  { example: { value: 'mph', is_public: true } },
);

export const ConfigEntry = named(
  'ConfigEntry',
  Type.Object({
    key: Type.String(),
    value: AnyJson,
    description: Nullable(Type.String()),
    value_schema: Type.Unknown({
      description:
        'JSON Schema of the values the service accepts for this entry (a PATCH with another is refused with 400); null: any JSON value',
    }),
    updated_at: DateTime,
  }),
);

export const ConfigQuery = Type.Object({
  prefix: Type.Optional(Type.String({ maxLength: 200, description: 'Only keys starting with this' })),
});
export const UpdateConfigBody = Body({ value: AnyJson }, { example: { value: 30 } });
