import { defineErrors } from '../../platform/http/errors.js';

export const JobErrors = defineErrors('job', {
  not_found: [404, 'No scheduled job has this name'],
  running: [409, 'The job is running now (on this node or another); try again when it has finished'],
});
