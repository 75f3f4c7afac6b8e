import { quoted } from '../../platform/http/errors.js';
import type { Kysely } from 'kysely';
import { hasPermission, OWN_ACCOUNT_ONLY, type Caller } from '../../platform/auth/caller.js';
import type { CredentialResolver } from '../../platform/auth/credentials.js';
import type { Schema } from '../../platform/db/schema/index.js';

import { createAccessRepo } from './repo.js';
import type { Caches } from '../../platform/kv/cache.js';
import { PermissionErrors, RoleErrors } from './errors.js';
import { UserErrors } from '../users/errors.js';
import type { DomainEventBus } from '../../platform/events.js';
import type { Static } from 'typebox';
import type { CreatePermissionBody, CreateRoleBody } from './schemas.js';

export const SUPER_ADMIN_ROLE = 'role_admin';
export const DEFAULT_USER_ROLE = 'role_user';
export const DEVELOPER_ROLE = 'role_developer';

export interface EffectiveAccess {
  roles: string[];
  permissions: string[];
  isSuperAdmin: boolean;
}

/**
 * Roles, permissions and who holds them. Changes that alter what existing
 * credentials may do apply from the next request on every node: a change to
 * one user's roles drops that user's cached credentials, a change to a role
 * starts a new credential-cache generation.
 */
interface Deps {
  db: Kysely<Schema>;
  credentials: Pick<CredentialResolver, 'invalidate' | 'invalidateAll'>;
  /** `user.roles_changed` goes out after a change commits: the user's cached credentials are dropped. */
  events: Pick<DomainEventBus, 'emit'>;
  caches: Pick<Caches, 'define'>;
}

export function createAccessService(deps: Deps) {
  const repo = createAccessRepo(deps.db, deps.caches);

  /** A user's roles changed: only their own credentials are re-read, not every cached one. */
  async function invalidateUser(userId: string): Promise<void> {
    await deps.events.emit('user.roles_changed', { userId });
  }

  async function requireRole(roleId: string) {
    const role = await repo.getRole(roleId);
    if (!role) throw RoleErrors.not_found();
    return role;
  }

  /** Non-super-admins may give or take only roles they hold themselves, and never a super-admin role. */
  async function assertMayHandOut(caller: Caller, roleId: string) {
    const role = await requireRole(roleId);
    if (caller.isSuperAdmin) return role;
    if (role.is_super_admin || !caller.roles.includes(roleId)) throw RoleErrors.not_held();
    // A key's roles are not its owner's: it may hand a role on only as far as it may use all of it (never beyond its owner).
    if ((await repo.permissionsOfRole(roleId)).some((p) => !hasPermission(caller, `${p.resource}:${p.action}`)))
      throw RoleErrors.not_held();
    return role;
  }

  /** Non-super-admins may change or delete only roles whose every permission they hold themselves. */
  async function assertCoversRole(caller: Caller, role: { id: string; is_super_admin: boolean }) {
    if (caller.isSuperAdmin) return;
    if (role.is_super_admin) throw RoleErrors.super_admin_role();
    const beyond = (await repo.permissionsOfRole(role.id)).find(
      (p) => !hasPermission(caller, `${p.resource}:${p.action}`),
    );
    if (beyond)
      throw RoleErrors.permission_not_held(
        `The role holds '${beyond.resource}:${beyond.action}', which you do not hold`,
      );
  }

  async function accessOfUser(userId: string): Promise<EffectiveAccess> {
    const roles = await repo.rolesOfUser(userId);
    const isSuperAdmin = roles.some((role) => role.is_super_admin);
    const permissions = await repo.permissionNamesOfRoles(roles.map((role) => role.id));
    return { roles: roles.map((role) => role.id), permissions: unique(permissions), isSuperAdmin };
  }

  /**
   * The one check for acting on another user's account (sign-in, 2FA, name, locale, pending changes,
   * bans, deletion and its cancellation, roles): whoever controls those controls the account, so a
   * non-super-admin may do it only to users who hold nothing beyond the caller's own permissions and
   * are no super admin. Judged on the roles the target holds now (a deleted user keeps theirs).
   * Acting on oneself, super admins and the system key pass.
   */
  async function assertMayManageUser(caller: Caller, userId: string): Promise<void> {
    if (caller.isSuperAdmin || caller.isSystem || caller.userId === userId) return;
    const target = await accessOfUser(userId);
    const beyond =
      target.isSuperAdmin ||
      target.permissions.some((permission) => !OWN_ACCOUNT_ONLY.has(permission) && !hasPermission(caller, permission));
    if (beyond) throw UserErrors.sign_in_beyond_caller();
  }

  return {
    // Reads the routes and other areas need as they are (the rules live in the functions below).
    listRoles: repo.listRoles,
    getRole: repo.getRole,
    listPermissions: repo.listPermissions,
    rolesOfUser: repo.rolesOfUser,
    lockSuperAdmins: repo.lockSuperAdmins,

    accessOfUser,
    assertMayManageUser,

    async accessOfApiKey(apiKeyId: string, scopes: string[]): Promise<EffectiveAccess> {
      const roles = await repo.rolesOfApiKey(apiKeyId);
      const permissions = await repo.permissionNamesOfRoles(roles.map((role) => role.id));
      return {
        roles: roles.map((role) => role.id),
        permissions: unique([...scopes, ...permissions]),
        isSuperAdmin: false,
      };
    },

    /** Scopes a caller hands to a key must be covered by the caller's own permissions (super admins: any). */
    assertScopesWithin(caller: Caller, scopes: string[]): void {
      if (caller.isSuperAdmin) return;
      const beyond = scopes.find((scope) => !hasPermission(caller, scope));
      if (beyond) throw RoleErrors.scope_beyond_caller(`Scope '${quoted(beyond)}' exceeds your own permissions`);
    },

    async createRole(input: Static<typeof CreateRoleBody>) {
      const id = roleIdFor(input.name);
      if ((await repo.getRole(id)) || (await repo.findRoleByName(input.name))) throw RoleErrors.name_taken();
      return repo.createRole({
        id,
        name: input.name,
        description: input.description ?? null,
        requires_two_factor: input.requires_two_factor ?? false,
      });
    },

    async updateRole(
      caller: Caller,
      id: string,
      changes: { name?: string; description?: string | null; requires_two_factor?: boolean },
    ) {
      const role = await requireRole(id);
      await assertCoversRole(caller, role);
      if (role.is_system && changes.name !== undefined && changes.name !== role.name) throw RoleErrors.system_rename();
      if (changes.name !== undefined && changes.name !== role.name && (await repo.findRoleByName(changes.name))) {
        throw RoleErrors.name_taken();
      }
      const updated = await repo.updateRole(id, {
        ...(changes.name !== undefined && { name: changes.name }),
        ...(changes.description !== undefined && { description: changes.description }),
        ...(changes.requires_two_factor !== undefined && { requires_two_factor: changes.requires_two_factor }),
      });
      if (changes.requires_two_factor !== undefined) await deps.credentials.invalidateAll();
      return updated!;
    },

    async deleteRole(caller: Caller, id: string) {
      const role = await requireRole(id);
      if (role.is_system) throw RoleErrors.system_delete();
      await assertCoversRole(caller, role);
      await repo.deleteRole(id);
      await deps.credentials.invalidateAll();
    },

    async permissionsOfRole(id: string) {
      await requireRole(id);
      return repo.permissionsOfRole(id);
    },

    /** Non-super-admins may grant only permissions they hold, and may not touch super-admin roles. */
    async grantPermission(caller: Caller, roleId: string, permissionId: string) {
      const role = await requireRole(roleId);
      const permission = await repo.getPermission(permissionId);
      if (!permission) throw PermissionErrors.not_found();
      if (!caller.isSuperAdmin) {
        if (role.is_super_admin) throw RoleErrors.super_admin_role();
        if (!hasPermission(caller, `${permission.resource}:${permission.action}`)) {
          throw PermissionErrors.grant_not_held();
        }
      }
      if (!(await repo.grantPermission(roleId, permissionId))) throw RoleErrors.permission_already_granted();
      await deps.credentials.invalidateAll();
      return permission;
    },

    async revokePermission(caller: Caller, roleId: string, permissionId: string) {
      const role = await requireRole(roleId);
      if (!caller.isSuperAdmin) {
        if (role.is_super_admin) throw RoleErrors.super_admin_role();
        const permission = await repo.getPermission(permissionId);
        if (permission && !hasPermission(caller, `${permission.resource}:${permission.action}`)) {
          throw PermissionErrors.revoke_not_held();
        }
      }
      if (!(await repo.revokePermission(roleId, permissionId))) throw RoleErrors.permission_not_granted();
      await deps.credentials.invalidateAll();
    },

    async getPermission(id: string) {
      const permission = await repo.getPermission(id);
      if (!permission) throw PermissionErrors.not_found();
      return permission;
    },

    async createPermission(input: Static<typeof CreatePermissionBody>) {
      const existing = (await repo.listPermissions()).find(
        (p) => p.resource === input.resource && p.action === input.action,
      );
      if (existing) throw PermissionErrors.exists(`Permission '${input.resource}:${input.action}' already exists`);
      const created = await repo.createPermission({
        resource: input.resource,
        action: input.action,
        description: input.description ?? null,
      });
      await deps.events.emit('permission.created', { permission: `${input.resource}:${input.action}` });
      return created;
    },

    async assignRoleToUser(caller: Caller, userId: string, roleId: string) {
      await assertMayHandOut(caller, roleId);
      await assertMayManageUser(caller, userId);
      if (!(await repo.assignRoleToUser(userId, roleId))) throw RoleErrors.already_assigned();
      await invalidateUser(userId);
    },

    async removeRoleFromUser(caller: Caller, userId: string, roleId: string) {
      const role = await assertMayHandOut(caller, roleId);
      await assertMayManageUser(caller, userId);
      // Under a lock on every super-admin membership, so two admins removing each other at once
      // cannot leave nobody in charge.
      await deps.db.transaction().execute(async (trx) => {
        if (role.is_super_admin) {
          const admins = await repo.lockSuperAdmins(trx);
          if (admins.size === 1 && admins.has(userId)) throw UserErrors.last_super_admin_role();
        }
        if (!(await repo.removeRoleFromUser(userId, roleId, trx))) throw RoleErrors.not_assigned();
      });
      await invalidateUser(userId);
    },

    invalidateUser,

    /** Assigns a role without the caller checks (bootstrap, CLI, registration). */
    grantRoleDirectly: (userId: string, roleId: string, executor?: Kysely<Schema>) =>
      repo.assignRoleToUser(userId, roleId, executor),

    rolesOfApiKey: (apiKeyId: string) => repo.rolesOfApiKey(apiKeyId),

    async assignRoleToApiKey(caller: Caller, apiKeyId: string, roleId: string) {
      await assertMayHandOut(caller, roleId);
      if (!(await repo.assignRoleToApiKey(apiKeyId, roleId))) throw RoleErrors.already_on_key();
    },

    async removeRoleFromApiKey(caller: Caller, apiKeyId: string, roleId: string) {
      await assertMayHandOut(caller, roleId);
      if (!(await repo.removeRoleFromApiKey(apiKeyId, roleId))) throw RoleErrors.not_on_key();
    },

    async userHoldsRole(userId: string, roleId: string): Promise<boolean> {
      return (await repo.rolesOfUser(userId)).some((role) => role.id === roleId);
    },
  };
}

/** `Fleet Managers` becomes `role_fleet_managers`. */
export function roleIdFor(name: string): string {
  const slug = name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 60);
  if (!slug) throw RoleErrors.invalid_name();
  return `role_${slug}`;
}

const unique = (values: string[]) => [...new Set(values)].sort();

export type AccessService = ReturnType<typeof createAccessService>;
