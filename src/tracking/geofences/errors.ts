import { defineErrors } from '../../platform/http/errors.js';

export const GeofenceErrors = defineErrors('geofence', {
  not_found: [404, 'Geofence not found'],
});
