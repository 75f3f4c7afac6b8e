import { sql, type Kysely } from 'kysely';
import type { Schema } from '../../platform/db/schema/index.js';
import { withDates, type Caches } from '../../platform/kv/cache.js';

const ROLE_COLUMNS = [
  'id',
  'name',
  'description',
  'is_system',
  'is_super_admin',
  'requires_two_factor',
  'created_at',
  'updated_at',
] as const;
const PERMISSION_COLUMNS = ['id', 'resource', 'action', 'description', 'created_at', 'updated_at'] as const;

const inserted = (result: { numInsertedOrUpdatedRows?: bigint }) => Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
const deleted = (result: { numDeletedRows: bigint }) => Number(result.numDeletedRows) > 0;

/** The role catalogue is read by every role and permission listing and changes rarely. */
const CATALOGUE_CACHE = {
  sharedTtlSecs: 300,
  localTtlMs: 60_000,
  decode: withDates<never>('created_at', 'updated_at'),
};
const ALL = 'all';
const ofRole = (roleId: string) => `role:${roleId}`;

/**
 * Roles and permissions are read through caches (every node forgets a changed entry at once); each
 * write below invalidates what it changes.
 */
export function createAccessRepo(db: Kysely<Schema>, caches: Pick<Caches, 'define'>) {
  const selectRoles = () => db.selectFrom('roles').select(ROLE_COLUMNS).orderBy('name').execute();
  const selectPermissions = () =>
    db.selectFrom('permissions').select(PERMISSION_COLUMNS).orderBy('resource').orderBy('action').execute();
  const roles = caches.define<Awaited<ReturnType<typeof selectRoles>>>('roles', CATALOGUE_CACHE);
  // The permission list under `all`, each role's own under `role:<id>`.
  const permissions = caches.define<Awaited<ReturnType<typeof selectPermissions>>>('permissions', CATALOGUE_CACHE);
  const listRoles = async () => (await roles.get(ALL, selectRoles))!;
  const listPermissions = async () => (await permissions.get(ALL, selectPermissions))!;

  return {
    listRoles,
    getRole: async (id: string) => (await listRoles()).find((role) => role.id === id),
    findRoleByName: async (name: string) => (await listRoles()).find((role) => role.name === name),

    async createRole(role: { id: string; name: string; description: string | null; requires_two_factor: boolean }) {
      const created = await db.insertInto('roles').values(role).returning(ROLE_COLUMNS).executeTakeFirstOrThrow();
      await roles.invalidate([ALL]);
      return created;
    },

    async updateRole(
      id: string,
      changes: { name?: string; description?: string | null; requires_two_factor?: boolean },
    ) {
      const updated = await db
        .updateTable('roles')
        .set({ ...changes, updated_at: new Date() })
        .where('id', '=', id)
        .returning(ROLE_COLUMNS)
        .executeTakeFirst();
      await roles.invalidate([ALL]);
      return updated;
    },

    async deleteRole(id: string) {
      await db.deleteFrom('roles').where('id', '=', id).execute();
      await Promise.all([roles.invalidate([ALL]), permissions.invalidate([ofRole(id)])]);
    },

    permissionsOfRole: async (roleId: string) =>
      (await permissions.get(ofRole(roleId), () =>
        db
          .selectFrom('permissions as p')
          .innerJoin('role_permissions as rp', 'rp.permission_id', 'p.id')
          .select(PERMISSION_COLUMNS.map((c) => `p.${c}` as const))
          .where('rp.role_id', '=', roleId)
          .orderBy('p.resource')
          .orderBy('p.action')
          .execute(),
      ))!,

    async grantPermission(roleId: string, permissionId: string): Promise<boolean> {
      const result = await db
        .insertInto('role_permissions')
        .values({ role_id: roleId, permission_id: permissionId })
        .onConflict((oc) => oc.doNothing())
        .executeTakeFirst();
      await permissions.invalidate([ofRole(roleId)]);
      return inserted(result);
    },

    async revokePermission(roleId: string, permissionId: string): Promise<boolean> {
      const result = await db
        .deleteFrom('role_permissions')
        .where('role_id', '=', roleId)
        .where('permission_id', '=', permissionId)
        .executeTakeFirst();
      await permissions.invalidate([ofRole(roleId)]);
      return deleted(result);
    },

    listPermissions,
    getPermission: async (id: string) => (await listPermissions()).find((permission) => permission.id === id),
    async createPermission(permission: { resource: string; action: string; description: string | null }) {
      const created = await db
        .insertInto('permissions')
        .values(permission)
        .returning(PERMISSION_COLUMNS)
        .executeTakeFirstOrThrow();
      await permissions.invalidate([ALL]);
      return created;
    },

    rolesOfUser: (userId: string) =>
      db
        .selectFrom('roles as r')
        .innerJoin('user_roles as ur', 'ur.role_id', 'r.id')
        .select(['r.id', 'r.name', 'r.description', 'r.is_super_admin'])
        .where('ur.user_id', '=', userId)
        .orderBy('r.name')
        .execute(),

    async assignRoleToUser(userId: string, roleId: string, executor: Kysely<Schema> = db): Promise<boolean> {
      const result = await executor
        .insertInto('user_roles')
        .values({ user_id: userId, role_id: roleId })
        .onConflict((oc) => oc.doNothing())
        .executeTakeFirst();
      return inserted(result);
    },

    async removeRoleFromUser(userId: string, roleId: string, executor: Kysely<Schema> = db): Promise<boolean> {
      const result = await executor
        .deleteFrom('user_roles')
        .where('user_id', '=', userId)
        .where('role_id', '=', roleId)
        .executeTakeFirst();
      return deleted(result);
    },

    /** Users (not deleted) holding a super-admin role; their memberships stay locked until the transaction ends. */
    async lockSuperAdmins(trx: Kysely<Schema>): Promise<Set<string>> {
      const rows = await trx
        .selectFrom('user_roles as ur')
        .innerJoin('roles as r', 'r.id', 'ur.role_id')
        .innerJoin('users as u', 'u.id', 'ur.user_id')
        .select('ur.user_id')
        .where('r.is_super_admin', '=', true)
        .where('u.deleted_at', 'is', null)
        .modifyEnd(sql`for update of ur`)
        .execute();
      return new Set(rows.map((row) => row.user_id));
    },

    rolesOfApiKey: (apiKeyId: string) =>
      db
        .selectFrom('roles as r')
        .innerJoin('api_key_roles as kr', 'kr.role_id', 'r.id')
        .select(ROLE_COLUMNS.map((c) => `r.${c}` as const))
        .where('kr.api_key_id', '=', apiKeyId)
        .orderBy('r.name')
        .execute(),

    async assignRoleToApiKey(apiKeyId: string, roleId: string): Promise<boolean> {
      const result = await db
        .insertInto('api_key_roles')
        .values({ api_key_id: apiKeyId, role_id: roleId })
        .onConflict((oc) => oc.doNothing())
        .executeTakeFirst();
      return inserted(result);
    },

    async removeRoleFromApiKey(apiKeyId: string, roleId: string): Promise<boolean> {
      const result = await db
        .deleteFrom('api_key_roles')
        .where('api_key_id', '=', apiKeyId)
        .where('role_id', '=', roleId)
        .executeTakeFirst();
      return deleted(result);
    },

    /** `resource:action` strings granted by these roles. */
    async permissionNamesOfRoles(roleIds: string[]): Promise<string[]> {
      if (roleIds.length === 0) return [];
      const rows = await db
        .selectFrom('permissions as p')
        .innerJoin('role_permissions as rp', 'rp.permission_id', 'p.id')
        .select(['p.resource', 'p.action'])
        .distinct()
        .where('rp.role_id', 'in', roleIds)
        .execute();
      return rows.map((row) => `${row.resource}:${row.action}`);
    },
  };
}

export type AccessRepo = ReturnType<typeof createAccessRepo>;
