import { defineErrors } from '../../platform/http/errors.js';

export const AuditErrors = defineErrors('audit', {
  event_not_found: [404, 'Audit event not found'],
  invalid_date: [400, 'start_date and end_date must be ISO 8601 dates or date-times'],
  unknown_user: [400, 'user_id does not name an existing user'],
  unknown_actor: [400, 'actor_id does not name an existing user'],
  actor_mismatch: [400, 'actor_id must be the user the X-ID-App-Assertion is for'],
  actor_needs_assertion: [403, 'An internal app attributes an event to an end user only with X-ID-App-Assertion'],
  app_mismatch: [403, 'X-ID-App-Assertion is for another app than X-ID-App-Key'],
  credentials_required: [
    401,
    'Send the system key, an internal app key (X-ID-App-Key) or a credential with audit:write',
  ],
});

export const AuditReportErrors = defineErrors('audit_report', {
  not_found: [404, 'Audit report not found'],
  already_reported: [409, 'This event has already been reported', { constraint: 'audit_reports_audit_event_id_key' }],
});
