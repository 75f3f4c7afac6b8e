import { defineErrors } from '../../platform/http/errors.js';

export const GpsFileErrors = defineErrors('gps_file', {
  not_acceptable: [
    406,
    'Accept names no format this export writes (application/gpx+xml, application/geo+json, application/vnd.google-earth.kml+xml, text/csv)',
  ],
  bad_range: [400, 'from must not be after to'],
  export_not_allowed: [
    403,
    "Only the device's owner, or someone it is shared with at level full, may export its points",
  ],
  track_too_long: [
    400,
    'The range holds more than 100,000 points: give zoom (or width and height) to thin it, or a shorter range; GET /v1/gps/export streams any number',
  ],
  device_required: [400, 'device_id is required unless the calling API key is linked to a device'],
  unknown_format: [400, 'The file is none of the formats this import reads; name one with format'],
  doctype_refused: [400, 'XML files with a DOCTYPE are refused (entity expansion)'],
  too_large: [413, 'The file is larger than IMPORT_MAX_BYTES'],
  empty_file: [400, 'The file is empty'],
  import_not_found: [404, 'Import not found'],
  import_running: [409, 'The import is still running; remove its points once it has ended'],
  import_not_revertible: [
    409,
    'The import was made before imports recorded their points, so its points cannot be told from the device’s others',
  ],
  stopping: [503, 'The service is shutting down; send the file again'],
  too_many_imports: [429, 'Too many imports at once; send the file again later'],
  spool_full: [503, 'The node has no room left for uploads (IMPORT_SPOOL_MAX_BYTES); send the file again later'],
  upload_too_slow: [
    408,
    'The upload sent less than IMPORT_MIN_BYTES_PER_SECOND over IMPORT_RATE_WINDOW_SECS and was cut off',
  ],
});
