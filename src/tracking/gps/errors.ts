import { defineErrors } from '../../platform/http/errors.js';

export const GpsErrors = defineErrors('gps', {
  unknown_device: [400, 'device_id does not name an existing device'],
  invalid_point: [400, 'The position sent cannot be stored'],
  no_device_for_credential: [
    403,
    'The credential is linked to no device: link the API key to a device (PATCH /v1/devices/{id} with api_key_id)',
  ],
  batch_refused: [400, 'Some points were refused; with all_or_nothing=true none was stored'],
  point_not_found: [404, 'GPS point not found'],
  point_linked_to_trip: [409, 'The GPS point belongs to a trip and cannot be deleted'],
  no_point: [404, 'No GPS point yet'],
  device_not_writable: [403, 'Points may be sent only to a device you own'],
  device_required: [
    400,
    'device_id is required: your points land on one of your devices (or link your API key to one)',
  ],
  stopping: [503, 'The service is shutting down; send the point again'],
});
