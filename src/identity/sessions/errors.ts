import { defineErrors } from '../../platform/http/errors.js';

export const SessionErrors = defineErrors('session', {
  session_required: [403, 'This endpoint requires a session token'],
  user_required: [403, 'This credential does not act for a user'],
  not_found: [404, 'Session not found'],
  expires_in_past: [400, 'expires must be in the future'],
});
