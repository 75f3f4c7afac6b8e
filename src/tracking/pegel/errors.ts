import { defineErrors } from '../../platform/http/errors.js';

export const WaterLevelErrors = defineErrors('water_level', {
  no_position: [404, 'No current position to search from; pass latitude and longitude'],
  no_station: [404, 'No station found'],
  upstream_unavailable: [503, 'The water-level service is unavailable; try again shortly'],
});
