import { errorBox, escapeHtml, page, turnstileWidget } from '../../platform/http/html-page.js';

/**
 * The pages mailed links open when no FRONTEND_URL takes them (the service's page layout, no script).
 * A link only shows a form: the token is spent by pressing its button, so a mail scanner that opens
 * links cannot use it up. Form actions are relative, so the pages work under PUBLIC_URL's path prefix.
 */

export function verifyEmailPage(input: { token: string; error?: string }): string {
  return page(
    'Confirm your email address',
    `
<h1>Confirm your email address</h1>${errorBox(input.error)}
<p>Confirm the address this link was sent to: a new account, a new address for your account, or email sign-in added to it.</p>
<form method="post" action="verify-email">
<input type="hidden" name="token" value="${escapeHtml(input.token)}">
<button type="submit">Confirm email address</button>
</form>`,
  );
}

export function resetPasswordPage(input: {
  token: string;
  error?: string;
  turnstileSiteKey?: string;
  revokePasskeysAndKeys?: boolean;
}): string {
  const described = input.error ? ' aria-describedby="password-rule error"' : ' aria-describedby="password-rule"';
  return page(
    'Choose a new password',
    `
<h1>Choose a new password</h1>${errorBox(input.error)}
<form method="post" action="reset-password">
<input type="hidden" name="token" value="${escapeHtml(input.token)}">
<label for="new_password">New password</label>
<input id="new_password" name="new_password" type="password" autocomplete="new-password" required minlength="8" maxlength="1024"${described} autofocus>
<p id="password-rule">At least 8 characters. Every session of your account ends once it is changed.</p>
<label for="password_again">New password again</label>
<input id="password_again" name="password_again" type="password" autocomplete="new-password" required minlength="8" maxlength="1024">
<label class="check"><input type="checkbox" name="revoke_passkeys_and_keys" value="true"${input.revokePasskeysAndKeys ? ' checked' : ''}> Also remove all passkeys and API keys</label>
<p class="hint">Do this if someone else may have used your account: a passkey or key they added would still let them in. You can add yours again afterwards.</p>
${input.turnstileSiteKey ? turnstileWidget(input.turnstileSiteKey) : ''}
<button type="submit">Set new password</button>
</form>`,
  );
}
