import { defineErrors } from '../../platform/http/errors.js';

/**
 * The callback cannot answer these to the browser as JSON once the state is verified: it redirects to the
 * connect's redirect_uri with `status=error&error=<code>` instead (access_denied, platform_not_configured and
 * the provider_* codes travel that way).
 */
export const IntegrationErrors = defineErrors('integration', {
  not_found: [404, 'Integration not found'],
  unknown_platform: [404, 'No integration platform with this slug'],
  platform_not_configured: [409, 'This platform is not enabled on this server'],
  invalid_redirect_uri: [400, 'redirect_uri must be an absolute http or https URL without credentials or a fragment'],
  unknown_scope: [400, 'A requested scope is not offered for this platform'],
  invalid_state: [400, 'The state is invalid, expired or already used; start the connection again'],
  access_denied: [400, 'The user did not allow the connection at the platform'],
  reconnect_required: [409, 'The platform no longer accepts this connection; connect it again'],
  provider_unavailable: [502, 'The platform could not be reached; try again shortly'],
  provider_error: [502, 'The platform refused the request or answered something unexpected'],
});
