import { defineErrors } from '../../platform/http/errors.js';

export const TripTemplateErrors = defineErrors('trip_template', {
  not_found: [404, 'Trip template not found'],
});
