import { defineErrors } from '../../platform/http/errors.js';

export const DeviceErrors = defineErrors('device', {
  unknown_api_key: [400, 'api_key_id does not name an existing API key'],
  api_key_not_linkable: [403, 'Only a key you own, or a system key, may be linked to a device'],
  not_found: [404, 'Device not found'],
  not_owner: [403, 'Only the owner of the device (or a holder of devices:write) may change it'],
});
