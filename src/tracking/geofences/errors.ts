import { defineErrors } from '../../platform/http/errors.js';

export const GeofenceErrors = defineErrors('geofence', {
  not_found: [404, 'Geofence not found'],
  not_owner: [403, 'Only the maker of the geofence (or a holder of geofences:write) may change it'],
  too_many: [409, 'You have as many geofences as one user may have (1,000): delete one first'],
});
