import { Type } from 'typebox';
import { PERMISSION_PATTERN } from '../../platform/auth/caller.js';
import { Body, DateTime, named, Nullable, Uuid } from '../../platform/http/schemas.js';

export const RoleId = Type.String({
  pattern: '^role_[a-z0-9_]{1,60}$',
  description: 'Role identifier, e.g. role_developer',
});

export const Role = named(
  'Role',
  Type.Object({
    id: RoleId,
    name: Type.String(),
    description: Nullable(Type.String()),
    is_system: Type.Boolean(),
    requires_two_factor: Type.Boolean(),
    created_at: DateTime,
    updated_at: DateTime,
  }),
);

export const RoleSummary = named(
  'RoleSummary',
  Type.Object({ id: RoleId, name: Type.String(), description: Nullable(Type.String()) }),
);

export const Permission = named(
  'Permission',
  Type.Object({
    id: Uuid,
    resource: Type.String(),
    action: Type.String(),
    description: Nullable(Type.String()),
    created_at: DateTime,
    updated_at: DateTime,
  }),
);

export const PermissionName = Type.String({
  pattern: PERMISSION_PATTERN,
  description: 'resource:action; * is a wildcard',
});

export const CreateRoleBody = Body(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
    requires_two_factor: Type.Optional(Type.Boolean()),
  },
  { example: { name: 'dispatcher', description: 'Plans trips and watches the fleet' } },
);

export const UpdateRoleBody = Body(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
    requires_two_factor: Type.Optional(Type.Boolean()),
  },
  { atLeastOne: true, example: { requires_two_factor: true } },
);

export const CreatePermissionBody = Body(
  {
    resource: Type.String({ pattern: '^([a-z][a-z0-9_]*|\\*)$', maxLength: 60 }),
    action: Type.String({ pattern: '^([a-z][a-z0-9_.]*|\\*)$', maxLength: 60 }),
    description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
  },
  { example: { resource: 'reports', action: 'read', description: 'Read fleet reports' } },
);

export const RoleParams = Type.Object({ id: RoleId });
export const RolePermissionParams = Type.Object({ id: RoleId, permission_id: Uuid });
export const UserRoleParams = Type.Object({ id: Uuid, role_id: RoleId });
export const RoleIdBody = Body({ role_id: RoleId }, { example: { role_id: 'role_user' } });
export const PermissionIdBody = Body(
  { permission_id: Uuid },
  { example: { permission_id: '3f1c2a9e-8b7d-4c5e-9a1f-2b3c4d5e6f70' } },
);
