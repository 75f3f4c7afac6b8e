import { defineErrors } from '../../platform/http/errors.js';

export const PreferenceErrors = defineErrors('preferences', {
  unknown_time_zone: [400, 'time_zone is not an IANA time zone this server knows (e.g. Europe/Berlin)'],
});
