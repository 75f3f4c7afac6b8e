import { defineErrors } from '../../platform/http/errors.js';

export const SettingErrors = defineErrors('setting', {
  not_found: [404, 'Setting not found'],
  exists: [409, 'The setting already exists'],
});

export const SystemConfigErrors = defineErrors('system_config', {
  not_found: [404, 'System config entry not found'],
  invalid_value: [400, 'The value does not have the shape this entry needs'],
});
