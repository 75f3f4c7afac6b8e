import { Type } from 'typebox';
import { Body, DateTime, named, Nullable, uuid, Uuid } from '../../platform/http/schemas.js';
import { PermissionName, RoleId } from '../access/schemas.js';
import { ReauthenticationPassword } from '../sign-in/schemas.js';

export const ApiKey = named(
  'ApiKey',
  Type.Object({
    id: Uuid,
    key_prefix: Type.String({ description: 'The first characters of the key, to recognise it' }),
    name: Type.String(),
    description: Nullable(Type.String()),
    scopes: Type.Array(Type.String()),
    is_active: Type.Boolean(),
    is_system: Type.Boolean(),
    user_id: Nullable(Uuid),
    expires_at: Nullable(DateTime),
    last_used_at: Nullable(DateTime),
    created_at: DateTime,
    updated_at: DateTime,
  }),
);

const Scopes = Type.Array(PermissionName, { maxItems: 200, description: 'Must be covered by your own permissions' });

export const CreateApiKeyBody = Body(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
    scopes: Type.Optional(Scopes),
    expires_at: Type.Optional(Nullable(Type.String({ format: 'date-time' }))),
    is_system: Type.Optional(Type.Boolean({ description: 'Super admins only' })),
    user_id: Type.Optional(uuid({ description: 'Owner; super admins only; must hold role_developer' })),
    current_password: ReauthenticationPassword,
  },
  { example: { name: 'Van 3 tracker', scopes: ['gps:write', 'gps:read'], expires_at: '2030-12-31T23:59:59Z' } },
);

export const UpdateApiKeyBody = Body(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
    scopes: Type.Optional(Scopes),
    expires_at: Type.Optional(Nullable(Type.String({ format: 'date-time' }))),
    is_active: Type.Optional(Type.Boolean()),
    is_system: Type.Optional(Type.Boolean({ description: 'Super admins only' })),
    user_id: Type.Optional(uuid({ description: 'Owner; super admins only; must hold role_developer' })),
  },
  { atLeastOne: true, example: { name: 'Van 3 tracker (spare)', is_active: false } },
);

export const CreatedApiKey = named(
  'CreatedApiKey',
  Type.Object({
    id: Uuid,
    key: Type.String({ description: 'The full key: shown only now' }),
    name: Type.String(),
    scopes: Type.Array(Type.String()),
    expires_at: Nullable(DateTime),
    message: Type.Optional(
      Type.String({
        description: 'Only for a key created without scopes: what it can do until it gets scopes or roles',
      }),
    ),
  }),
);

export const RegeneratedApiKey = Type.Object({
  id: Uuid,
  key: Type.String({ description: 'The new full key: shown only now; the old one stops working at once' }),
  key_prefix: Type.String(),
  name: Type.String(),
  scopes: Type.Array(Type.String()),
  is_active: Type.Boolean(),
  expires_at: Nullable(DateTime),
});

export const ApiKeyRoleParams = Type.Object({ id: Uuid, role_id: RoleId });
