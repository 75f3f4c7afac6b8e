import { defineErrors } from '../../platform/http/errors.js';

export const ExportErrors = defineErrors('export', {
  failed: [500, 'The export could not be generated; nothing was sent. Try again later'],
});
