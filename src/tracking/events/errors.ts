import { defineErrors } from '../../platform/http/errors.js';

export const EventErrors = defineErrors('event', {
  not_found: [404, 'Event not found'],
});
