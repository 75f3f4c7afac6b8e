/**
 * The provider's sign-in and consent pages: plain server-rendered HTML and CSS, no script of their own
 * and no front-end build. Every value is escaped; the pages are only ever served with a CSP that allows
 * their own inline style, form posts to this origin, and (with bot protection) Cloudflare's Turnstile.
 */

const TURNSTILE_ORIGIN = 'https://challenges.cloudflare.com';

/**
 * The pages' Content-Security-Policy. Browsers apply form-action to the redirects after a post too,
 * so the client's redirect URI (already checked against its registration) is allowed as well.
 */
export function pageCsp(redirectUri?: string, turnstile = false): string {
  let target = '';
  if (redirectUri && URL.canParse(redirectUri)) {
    const url = new URL(redirectUri);
    target = url.origin !== 'null' ? ` ${url.origin}` : ` ${url.protocol}`;
  }
  const widget = turnstile ? `; script-src ${TURNSTILE_ORIGIN}; frame-src ${TURNSTILE_ORIGIN}` : '';
  return `default-src 'none'; style-src 'unsafe-inline'; img-src https: data:; form-action 'self'${target}; frame-ancestors 'none'; base-uri 'none'${widget}`;
}

const escapes: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (c) => escapes[c]!);

const STYLE = `
body{font:16px/1.5 system-ui,sans-serif;background:#f4f6f8;color:#1b1f24;margin:0;display:grid;place-items:center;min-height:100vh}
main{background:#fff;border-radius:8px;box-shadow:0 1px 4px #0002;padding:2rem;width:min(24rem,90vw)}
h1{font-size:1.3rem;margin:0 0 1rem}label{display:block;margin:.8rem 0 .2rem;font-weight:600}
input{width:100%;box-sizing:border-box;padding:.55rem;border:1px solid #8a949e;border-radius:4px;font:inherit}
input:focus,button:focus{outline:3px solid #1d6fd8;outline-offset:1px}
button{margin-top:1.2rem;padding:.6rem 1rem;border:0;border-radius:4px;background:#1d6fd8;color:#fff;font:inherit;cursor:pointer}
button.secondary{background:#e3e7eb;color:#1b1f24;margin-left:.5rem}
.error{background:#fdecea;color:#8a1c13;padding:.6rem;border-radius:4px}ul{padding-left:1.2rem}
`;

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
    `<meta name="referrer" content="no-referrer"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head>` +
    `<body><main>${body}</main></body></html>`;
}

const errorBox = (error?: string) => (error ? `<p class="error" role="alert" id="error">${escapeHtml(error)}</p>` : '');

/** Cloudflare's Turnstile widget, posting its answer as `turnstile_token` (what the login check reads). */
const turnstileWidget = (siteKey: string) =>
  `<script src="${TURNSTILE_ORIGIN}/turnstile/v0/api.js" async defer></script>` +
  `<div class="cf-turnstile" data-sitekey="${escapeHtml(siteKey)}" data-response-field-name="turnstile_token"></div>`;

export function loginPage(input: { action: string; clientName: string; error?: string; identifier?: string; turnstileSiteKey?: string }): string {
  const described = input.error ? ' aria-describedby="error"' : '';
  return page(`Sign in to ${input.clientName}`, `
<h1>Sign in to continue to ${escapeHtml(input.clientName)}</h1>${errorBox(input.error)}
<form method="post" action="${escapeHtml(input.action)}">
<label for="identifier">Username or email</label>
<input id="identifier" name="identifier" autocomplete="username" required maxlength="320" value="${escapeHtml(input.identifier ?? '')}"${described} autofocus>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required maxlength="1024"${described}>
${input.turnstileSiteKey ? turnstileWidget(input.turnstileSiteKey) : ''}
<button type="submit">Sign in</button>
</form>`);
}

export function twoFactorPage(input: { action: string; clientName: string; tempToken: string; error?: string }): string {
  return page('Two-factor authentication', `
<h1>Enter your authentication code</h1>${errorBox(input.error)}
<p>Open your authenticator app to continue to ${escapeHtml(input.clientName)}, or use a backup code.</p>
<form method="post" action="${escapeHtml(input.action)}">
<input type="hidden" name="temp_token" value="${escapeHtml(input.tempToken)}">
<label for="code">Code</label>
<input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" required maxlength="32" autofocus>
<button type="submit">Verify</button>
</form>`);
}

export function consentPage(input: { action: string; clientName: string; homepage?: string | null; scopes: string[]; username: string }): string {
  const scopes = input.scopes.map((scope) => `<li>${escapeHtml(SCOPE_DESCRIPTIONS[scope] ?? scope)}</li>`).join('');
  const site = input.homepage && URL.canParse(input.homepage) ? ` (<a href="${escapeHtml(input.homepage)}" rel="noopener noreferrer">${escapeHtml(new URL(input.homepage).host)}</a>)` : '';
  return page(`Allow ${input.clientName}?`, `
<h1>${escapeHtml(input.clientName)}${site} wants access to your account</h1>
<p>Signed in as <strong>${escapeHtml(input.username)}</strong>. It asks to:</p><ul>${scopes}</ul>
<form method="post" action="${escapeHtml(input.action)}">
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</form>`);
}

export function messagePage(title: string, message: string): string {
  return page(title, `<h1>${escapeHtml(title)}</h1><p role="alert">${escapeHtml(message)}</p>`);
}

const SCOPE_DESCRIPTIONS: Record<string, string> = {
  openid: 'Know who you are',
  profile: 'See your username, language and picture',
  email: 'See your email address',
  offline_access: 'Stay connected when you are not using it',
};
