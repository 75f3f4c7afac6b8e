import { defineErrors } from '../../platform/http/errors.js';

export const LocationErrors = defineErrors('location', {
  not_found: [404, 'Location not found'],
  contact_not_found: [404, 'Contact not found'],
});
