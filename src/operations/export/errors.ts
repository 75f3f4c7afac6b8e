import { defineErrors } from '../../platform/http/errors.js';

export const ExportErrors = defineErrors('export', {
  user_required: [403, 'This credential does not belong to a user'],
  failed: [500, 'The export could not be generated; nothing was sent. Try again later'],
});
