import { defineErrors } from '../../platform/http/errors.js';

export const ApiKeyErrors = defineErrors('api_key', {
  not_found: [404, 'API key not found'],
  system_key_super_admin_only: [403, 'Only super admins may change system keys'],
  owner_super_admin_only: [403, 'Only super admins may set user_id'],
  unknown_owner: [400, 'user_id does not name an existing user'],
  owner_not_developer: [400, 'The user_id owner must hold role_developer'],
  is_system_super_admin_only: [403, 'Only super admins may set is_system'],
  system_key_delete: [403, 'System keys cannot be deleted'],
  invalid_expiry: [400, 'expires_at must be an ISO 8601 date-time'],
  expiry_in_past: [400, 'expires_at must be in the future'],
  system_key_on_device: [
    409,
    'The device reports with a system key, which is never revoked this way; link another key to it first (PATCH /v1/devices/{id} with api_key_id)',
  ],
});
