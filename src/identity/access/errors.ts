import { defineErrors } from '../../platform/http/errors.js';

export const RoleErrors = defineErrors('role', {
  not_found: [404, 'Role not found'],
  not_held: [403, 'You can only assign or remove roles you hold yourself'],
  super_admin_role: [403, 'Only super admins may change a super-admin role'],
  permission_not_held: [403, 'The role holds a permission you do not hold'],
  scope_beyond_caller: [403, 'A scope exceeds your own permissions'],
  name_taken: [409, 'A role with this name already exists'],
  system_rename: [400, 'System roles cannot be renamed'],
  system_delete: [403, 'System roles cannot be deleted'],
  permission_already_granted: [409, 'The role already has this permission'],
  permission_not_granted: [404, 'The role does not have this permission'],
  already_assigned: [409, 'The user already has this role'],
  not_assigned: [404, 'The user does not have this role'],
  already_on_key: [409, 'The API key already has this role'],
  not_on_key: [404, 'The API key does not have this role'],
  invalid_name: [400, 'name must contain letters or digits'],
});

export const PermissionErrors = defineErrors('permission', {
  not_found: [404, 'Permission not found'],
  grant_not_held: [403, 'You can only grant permissions you hold yourself'],
  revoke_not_held: [403, 'You can only revoke permissions you hold yourself'],
  exists: [409, 'The permission already exists'],
});
