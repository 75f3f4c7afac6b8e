import { errorBox, escapeHtml, page, turnstileWidget } from '../../platform/http/html-page.js';

/** The provider's sign-in and consent pages, in the service's page layout (`platform/http/html-page.ts`). */
export { messagePage, pageCsp } from '../../platform/http/html-page.js';

export function loginPage(input: {
  action: string;
  clientName: string;
  error?: string;
  identifier?: string;
  turnstileSiteKey?: string;
}): string {
  const described = input.error ? ' aria-describedby="error"' : '';
  return page(
    `Sign in to ${input.clientName}`,
    `
<h1>Sign in to continue to ${escapeHtml(input.clientName)}</h1>${errorBox(input.error)}
<form method="post" action="${escapeHtml(input.action)}">
<label for="identifier">Username or email</label>
<input id="identifier" name="identifier" autocomplete="username" required maxlength="320" value="${escapeHtml(input.identifier ?? '')}"${described} autofocus>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required maxlength="1024"${described}>
${input.turnstileSiteKey ? turnstileWidget(input.turnstileSiteKey) : ''}
<button type="submit">Sign in</button>
</form>`,
  );
}

export function twoFactorPage(input: {
  action: string;
  clientName: string;
  tempToken: string;
  error?: string;
}): string {
  return page(
    'Two-factor authentication',
    `
<h1>Enter your authentication code</h1>${errorBox(input.error)}
<p>Open your authenticator app to continue to ${escapeHtml(input.clientName)}, or use a backup code.</p>
<form method="post" action="${escapeHtml(input.action)}">
<input type="hidden" name="temp_token" value="${escapeHtml(input.tempToken)}">
<label for="code">Code</label>
<input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" required maxlength="32" autofocus>
<button type="submit">Verify</button>
</form>`,
  );
}

export function consentPage(input: {
  action: string;
  clientName: string;
  homepage?: string | null;
  scopes: string[];
  username: string;
}): string {
  const scopes = input.scopes.map((scope) => `<li>${escapeHtml(SCOPE_DESCRIPTIONS[scope] ?? scope)}</li>`).join('');
  const site =
    input.homepage && URL.canParse(input.homepage)
      ? ` (<a href="${escapeHtml(input.homepage)}" rel="noopener noreferrer">${escapeHtml(new URL(input.homepage).host)}</a>)`
      : '';
  return page(
    `Allow ${input.clientName}?`,
    `
<h1>${escapeHtml(input.clientName)}${site} wants access to your account</h1>
<p>Signed in as <strong>${escapeHtml(input.username)}</strong>. It asks to:</p><ul>${scopes}</ul>
<form method="post" action="${escapeHtml(input.action)}">
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</form>`,
  );
}

const SCOPE_DESCRIPTIONS: Record<string, string> = {
  openid: 'Know who you are',
  profile: 'See your username, language and picture',
  email: 'See your email address',
  offline_access: 'Stay connected when you are not using it',
};
