import { defineErrors } from '../../platform/http/errors.js';

export const ConsoleErrors = defineErrors('console', {
  asset_not_found: [404, 'No such console file (an old page asks for a previous version: reload it)'],
});
