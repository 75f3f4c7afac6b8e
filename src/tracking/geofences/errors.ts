import { defineErrors } from '../../platform/http/errors.js';

export const GeofenceErrors = defineErrors('geofence', {
  not_found: [404, 'Geofence not found'],
  not_owner: [403, 'Only the maker of the geofence (or a holder of geofences:write) may change it'],
});
