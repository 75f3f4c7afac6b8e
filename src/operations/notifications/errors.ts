import { defineErrors } from '../../platform/http/errors.js';

export const NotificationErrors = defineErrors('notification', {
  channel_not_found: [404, 'Notification channel not found'],
  rule_not_found: [404, 'Notification rule not found'],
  too_many_channels: [409, 'You have as many notification channels as one user may have'],
  too_many_rules: [409, 'You have as many notification rules as one user may have'],
});
