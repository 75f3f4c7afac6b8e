import { defineErrors } from '../../platform/http/errors.js';

export const TwoFactorErrors = defineErrors('two_factor', {
  user_id_required_for_system_key: [400, 'user_id is required when calling with the system key'],
  user_id_required: [400, 'user_id is required for a credential without a user'],
  unknown_platform: [400, 'platform_id does not name an existing platform'],
  platform_unsupported: [400, 'The platform does not support two-factor authentication'],
  already_enabled: [409, 'Two-factor authentication is already enabled'],
  no_setup_pending: [400, 'No two-factor setup is pending; start one first'],
  setup_expired: [400, 'The two-factor setup has expired; start it again'],
  invalid_code: [400, 'Invalid two-factor code'],
  setup_changed: [409, 'The setup changed meanwhile; start it again'],
  not_enabled: [400, 'Two-factor authentication is not enabled'],
  unknown_user: [400, 'user_id does not name an existing user'],
  unknown_oauth_provider: [400, 'oauth_provider does not name an existing platform'],
  invalid_challenge: [401, 'Invalid or expired two-factor token'],
  wrong_sign_in_code: [401, 'Invalid two-factor code'],
  user_id_mismatch: [400, 'user_id in the query and in the body differ'],
});
