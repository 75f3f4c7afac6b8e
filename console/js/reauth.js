// @ts-check
import { ApiError } from './api.js';
import { field } from './dom.js';
import { t } from './i18n.js';

/**
 * The current password a session gives when it signed in more than 15 minutes ago and adds a passkey or
 * creates an API key: the API then answers 403 auth.reauthentication_required, so a stolen session alone
 * cannot leave a way in behind. Hidden until the API asks; an account without a password signs in again.
 */
export function reauthField() {
  const { wrapper, input } = field(t('reauth.password'), {
    name: 'reauth-password',
    type: 'password',
    autocomplete: 'current-password',
    maxlength: 1024,
  });
  wrapper.hidden = true;
  return {
    wrapper,
    /** The fields to add to the request's body: the password, once given. */
    body: () => (input.value ? { current_password: input.value } : {}),
    /**
     * When `err` is the API asking to confirm, shows the field and answers the message to show; otherwise undefined.
     * @param {unknown} err
     */
    asked(err) {
      if (!(err instanceof ApiError) || err.code !== 'auth.reauthentication_required') return undefined;
      wrapper.hidden = false;
      input.focus();
      return t('reauth.needed');
    },
    clear: () => {
      input.value = '';
    },
  };
}
