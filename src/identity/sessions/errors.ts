import { defineErrors } from '../../platform/http/errors.js';

export const SessionErrors = defineErrors('session', {
  session_required: [403, 'This endpoint requires a session token'],
  user_required: [403, 'This credential does not act for a user'],
  not_found: [404, 'Session not found'],
  /** Answered in the spec's own shape ({ error, success: false, message, code }) by DELETE /v1/users/me/sessions/{id}. */
  current_session: [400, 'Cannot revoke the current session; use POST /v1/auth/logout instead'],
  expires_in_past: [400, 'expires must be in the future'],
});
