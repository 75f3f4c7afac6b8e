import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { callerOf, requirePermission } from '../../platform/auth/hooks.js';
import {
  created,
  errorResponses,
  ListEnvelope,
  locateCreated,
  single,
  SingleEnvelope,
} from '../../platform/http/envelopes.js';
import { IdParams } from '../../platform/http/schemas.js';
import type { UsersService } from '../users/service.js';
import {
  CreatePermissionBody,
  CreateRoleBody,
  Permission,
  PermissionIdBody,
  Role,
  RoleIdBody,
  RoleParams,
  RolePermissionParams,
  RoleSummary,
  UpdateRoleBody,
  UserRoleParams,
} from './schemas.js';
import type { AccessService } from './service.js';
import { RoleErrors, PermissionErrors } from './errors.js';
import { UserErrors } from '../users/errors.js';

export interface AccessRouteDeps {
  access: AccessService;
  users: Pick<UsersService, 'exists'>;
}

const list = <T>(request: Parameters<typeof single>[0], data: T[]) => single(request, data);

export async function accessRoutes(fastify: FastifyInstance, { access, users }: AccessRouteDeps): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const roleTags = ['Roles and permissions'];

  app.get(
    '/v1/roles',
    {
      config: { auth: requirePermission('roles:read') },
      schema: { tags: roleTags, summary: 'List roles', response: { 200: ListEnvelope(Role) } },
    },
    async (request) => list(request, await access.listRoles()),
  );

  app.get(
    '/v1/roles/:id',
    {
      config: { auth: requirePermission('roles:read') },
      schema: {
        tags: roleTags,
        summary: 'Get a role',
        params: RoleParams,
        response: { 200: SingleEnvelope(Role), ...errorResponses(RoleErrors.not_found) },
      },
    },
    async (request) => {
      const role = await access.getRole(request.params.id);
      if (!role) throw RoleErrors.not_found();
      return single(request, role);
    },
  );

  app.post(
    '/v1/roles',
    {
      config: { auth: requirePermission('roles:write') },
      schema: {
        tags: roleTags,
        summary: 'Create a role',
        body: CreateRoleBody,
        response: { 201: SingleEnvelope(Role), ...errorResponses(RoleErrors.invalid_name, RoleErrors.name_taken) },
      },
    },
    async (request, reply) => created(request, reply, '/v1/roles', await access.createRole(request.body)),
  );

  app.patch(
    '/v1/roles/:id',
    {
      config: { auth: requirePermission('roles:write') },
      schema: {
        tags: roleTags,
        summary: 'Update a role',
        params: RoleParams,
        body: UpdateRoleBody,
        response: {
          200: SingleEnvelope(Role),
          ...errorResponses(
            RoleErrors.system_rename,
            RoleErrors.permission_not_held,
            RoleErrors.super_admin_role,
            RoleErrors.not_found,
            RoleErrors.name_taken,
          ),
        },
      },
    },
    async (request) => single(request, await access.updateRole(callerOf(request), request.params.id, request.body)),
  );

  app.delete(
    '/v1/roles/:id',
    {
      config: { auth: requirePermission('roles:delete') },
      schema: {
        tags: roleTags,
        summary: 'Delete a role (not a system role)',
        params: RoleParams,
        response: {
          204: Type.Null(),
          ...errorResponses(RoleErrors.permission_not_held, RoleErrors.system_delete, RoleErrors.not_found),
        },
      },
    },
    async (request, reply) => {
      await access.deleteRole(callerOf(request), request.params.id);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/v1/roles/:id/permissions',
    {
      config: { auth: requirePermission('roles:read') },
      schema: {
        tags: roleTags,
        summary: "List a role's permissions",
        params: RoleParams,
        response: { 200: ListEnvelope(Permission), ...errorResponses(RoleErrors.not_found) },
      },
    },
    async (request) => list(request, await access.permissionsOfRole(request.params.id)),
  );

  app.post(
    '/v1/roles/:id/permissions',
    {
      config: { auth: requirePermission('roles:write') },
      schema: {
        tags: roleTags,
        summary: 'Grant a permission to a role',
        description: 'Non-super-admins may grant only permissions they hold, and may not change super-admin roles.',
        params: RoleParams,
        body: PermissionIdBody,
        response: {
          201: SingleEnvelope(Permission),
          ...errorResponses(
            PermissionErrors.grant_not_held,
            RoleErrors.super_admin_role,
            PermissionErrors.not_found,
            RoleErrors.not_found,
            RoleErrors.permission_already_granted,
          ),
        },
      },
    },
    async (request, reply) =>
      created(
        request,
        reply,
        `/v1/roles/${request.params.id}/permissions`,
        await access.grantPermission(callerOf(request), request.params.id, request.body.permission_id),
      ),
  );

  app.delete(
    '/v1/roles/:id/permissions/:permission_id',
    {
      config: { auth: requirePermission('roles:write') },
      schema: {
        tags: roleTags,
        summary: 'Take a permission from a role',
        params: RolePermissionParams,
        response: {
          204: Type.Null(),
          ...errorResponses(
            PermissionErrors.revoke_not_held,
            RoleErrors.super_admin_role,
            RoleErrors.not_found,
            RoleErrors.permission_not_granted,
          ),
        },
      },
    },
    async (request, reply) => {
      await access.revokePermission(callerOf(request), request.params.id, request.params.permission_id);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/v1/permissions',
    {
      config: { auth: requirePermission('permissions:read') },
      schema: { tags: roleTags, summary: 'List permissions', response: { 200: ListEnvelope(Permission) } },
    },
    async (request) => list(request, await access.listPermissions()),
  );

  app.get(
    '/v1/permissions/:id',
    {
      config: { auth: requirePermission('permissions:read') },
      schema: {
        tags: roleTags,
        summary: 'Get a permission',
        params: IdParams,
        response: { 200: SingleEnvelope(Permission), ...errorResponses(PermissionErrors.not_found) },
      },
    },
    async (request) => single(request, await access.getPermission(request.params.id)),
  );

  app.post(
    '/v1/permissions',
    {
      config: { auth: requirePermission('permissions:write') },
      schema: {
        tags: roleTags,
        summary: 'Create a permission',
        body: CreatePermissionBody,
        response: { 201: SingleEnvelope(Permission), ...errorResponses(PermissionErrors.exists) },
      },
    },
    async (request, reply) => created(request, reply, '/v1/permissions', await access.createPermission(request.body)),
  );

  const userTags = ['Users'];
  const requireUser = async (id: string) => {
    if (!(await users.exists(id))) throw UserErrors.not_found();
  };
  const rolesOf = async (userId: string) =>
    (await access.rolesOfUser(userId)).map(({ id, name, description }) => ({ id, name, description }));
  const RolesBody = Type.Object({ roles: Type.Array(RoleSummary) });

  app.get(
    '/v1/users/:id/permissions',
    {
      config: { auth: requirePermission('users:read', { orSelf: 'id' }) },
      schema: {
        tags: userTags,
        summary: "A user's effective permissions (from all their roles)",
        params: IdParams,
        response: {
          200: Type.Object({ permissions: Type.Array(Type.String()) }),
          ...errorResponses(UserErrors.not_found),
        },
      },
    },
    async (request) => {
      await requireUser(request.params.id);
      return { permissions: (await access.accessOfUser(request.params.id)).permissions };
    },
  );

  app.get(
    '/v1/users/:id/roles',
    {
      config: { auth: requirePermission('users:read', { orSelf: 'id' }) },
      schema: {
        tags: userTags,
        summary: "A user's roles",
        params: IdParams,
        response: { 200: RolesBody, ...errorResponses(UserErrors.not_found) },
      },
    },
    async (request) => {
      await requireUser(request.params.id);
      return { roles: await rolesOf(request.params.id) };
    },
  );

  app.post(
    '/v1/users/:id/roles',
    {
      config: { auth: requirePermission('users:write') },
      schema: {
        tags: userTags,
        summary: 'Assign a role to a user',
        description:
          'Non-super-admins may assign only roles they hold themselves, and only to users who hold nothing beyond their own permissions.',
        params: IdParams,
        body: RoleIdBody,
        response: {
          201: RolesBody,
          ...errorResponses(
            RoleErrors.not_held,
            UserErrors.sign_in_beyond_caller,
            RoleErrors.not_found,
            UserErrors.not_found,
            RoleErrors.already_assigned,
          ),
        },
      },
    },
    async (request, reply) => {
      await requireUser(request.params.id);
      await access.assignRoleToUser(callerOf(request), request.params.id, request.body.role_id);
      locateCreated(request, reply, `/v1/users/${request.params.id}/roles/${request.body.role_id}`);
      return { roles: await rolesOf(request.params.id) };
    },
  );

  app.delete(
    '/v1/users/:id/roles/:role_id',
    {
      config: { auth: requirePermission('users:write') },
      schema: {
        tags: userTags,
        summary: 'Remove a role from a user',
        description:
          'Non-super-admins may remove only roles they hold themselves, and only from users who hold nothing beyond their own permissions.',
        params: UserRoleParams,
        response: {
          204: Type.Null(),
          ...errorResponses(
            RoleErrors.not_held,
            UserErrors.sign_in_beyond_caller,
            RoleErrors.not_assigned,
            RoleErrors.not_found,
            UserErrors.not_found,
            UserErrors.last_super_admin_role,
          ),
        },
      },
    },
    async (request, reply) => {
      await requireUser(request.params.id);
      await access.removeRoleFromUser(callerOf(request), request.params.id, request.params.role_id);
      return reply.status(204).send(null);
    },
  );
}
