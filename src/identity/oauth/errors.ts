import { defineErrors } from '../../platform/http/errors.js';

export const OAuthErrors = defineErrors('oauth', {
  user_context_required: [403, 'Withdrawing consent needs your own session'],
  consent_not_found: [404, 'You have not consented to this client'],
  app_not_connected: [404, 'This app holds no consent and no grant of yours'],
  assertion_needs_first_party_client: [
    403,
    'X-ID-App-Assertion may only start an authorization for an active first-party client',
  ],
  assertion_user_unavailable: [403, 'The user named by X-ID-App-Assertion cannot sign in'],
  cross_origin_form: [403, 'Forms of the sign-in pages must be posted from this site'],
  interaction_expired: [400, 'This sign-in page has expired; start again from the app'],
  interaction_not_found: [404, 'No authorization is waiting for a sign-in under this id; start again from the app'],
  handoff_needs_session: [
    403,
    'A handoff needs the session of the person who signed in, not an API key or OAuth token',
  ],
});
