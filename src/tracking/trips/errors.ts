import { defineErrors } from '../../platform/http/errors.js';

export const TripErrors = defineErrors('trip', {
  not_found: [404, 'Trip not found'],
  invalid_transition: [400, 'The trip cannot make this status change'],
  logging_conflict: [
    409,
    'Another active trip is already logging GPS on this device',
    { constraint: 'trips_one_logging_trip_per_device' },
  ],
  not_owner: [403, "Only the trip's maker or its device's owner (or a holder of trips:write) may change it"],
  not_deletable: [409, 'An active or paused trip cannot be deleted; complete it first'],
});
