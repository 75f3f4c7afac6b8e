import { defineErrors } from '../../platform/http/errors.js';

export const SharingErrors = defineErrors('sharing', {
  self_service_off: [
    403,
    'Self-service tracking is switched off on this instance (system config tracking.self_service)',
  ],
  not_owner: [403, "Only the device's owner (or a holder of devices:write) may do this"],
  share_not_found: [404, 'Share not found'],
  not_a_member: [403, 'You may share only with a group you are a member of'],
  self_share: [400, 'A device is not shared with its own owner'],
  expired: [400, 'expires_at must lie in the future'],
  too_many: [409, 'Too many shares: at most 100 per device and 1,000 per owner'],
  unknown_grantee: [400, 'user_id or group_id names nobody'],
});
