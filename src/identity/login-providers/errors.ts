import { defineErrors } from '../../platform/http/errors.js';

export const PlatformErrors = defineErrors('platform', {
  not_found: [404, 'Platform not found'],
});
