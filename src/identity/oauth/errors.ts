import { defineErrors } from '../../platform/http/errors.js';

export const OAuthErrors = defineErrors('oauth', {
  public_url_required: [503, 'The OAuth provider needs PUBLIC_URL: its issuer is an absolute URL every client must agree on'],
});
