import type { FastifyReply } from 'fastify';

/**
 * The layout of the few pages the service serves itself (OAuth sign-in and consent, the pages mailed
 * links open): plain server-rendered HTML and CSS, no script of their own and no front-end build.
 * Every value is escaped; the pages are only ever sent with `sendPage`, whose CSP allows their own
 * inline style, form posts to this origin and (with bot protection) Cloudflare's Turnstile.
 */

export const TURNSTILE_ORIGIN = 'https://challenges.cloudflare.com';

/**
 * The pages' Content-Security-Policy. Browsers apply form-action to the redirects after a post too,
 * so a redirect target (an OAuth client's redirect URI, already checked against its registration) is
 * allowed as well.
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

/** Sends a page: never cached (pages carry tokens), never framed. */
export function sendPage(reply: FastifyReply, status: number, html: string, csp: string): FastifyReply {
  return reply
    .status(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('content-security-policy', csp)
    .header('cache-control', 'no-store')
    .header('x-frame-options', 'DENY')
    .send(html);
}

const escapes: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (c) => escapes[c]!);

const STYLE = `
body{font:16px/1.5 system-ui,sans-serif;background:#f4f6f8;color:#1b1f24;margin:0;display:grid;place-items:center;min-height:100vh}
main{background:#fff;border-radius:8px;box-shadow:0 1px 4px #0002;padding:2rem;width:min(24rem,90vw)}
h1{font-size:1.3rem;margin:0 0 1rem}label{display:block;margin:.8rem 0 .2rem;font-weight:600}
input{width:100%;box-sizing:border-box;padding:.55rem;border:1px solid #8a949e;border-radius:4px;font:inherit}
input:focus,button:focus{outline:3px solid #1d6fd8;outline-offset:1px}
label.check{font-weight:400}label.check input{width:auto;margin:0 .5rem 0 0}.hint{font-size:.9rem;color:#4a5560;margin:.2rem 0}
button{margin-top:1.2rem;padding:.6rem 1rem;border:0;border-radius:4px;background:#1d6fd8;color:#fff;font:inherit;cursor:pointer}
button.secondary{background:#e3e7eb;color:#1b1f24;margin-left:.5rem}
.error{background:#fdecea;color:#8a1c13;padding:.6rem;border-radius:4px}ul{padding-left:1.2rem}
`;

export function page(title: string, body: string, lang = 'en'): string {
  return (
    `<!doctype html><html lang="${escapeHtml(lang)}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
    `<meta name="referrer" content="no-referrer"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head>` +
    `<body><main>${body}</main></body></html>`
  );
}

export const errorBox = (error?: string) =>
  error ? `<p class="error" role="alert" id="error">${escapeHtml(error)}</p>` : '';

/** Cloudflare's Turnstile widget, posting its answer as `turnstile_token` (what the bot check reads). */
export const turnstileWidget = (siteKey: string) =>
  `<script src="${TURNSTILE_ORIGIN}/turnstile/v0/api.js" async defer></script>` +
  `<div class="cf-turnstile" data-sitekey="${escapeHtml(siteKey)}" data-response-field-name="turnstile_token"></div>`;

export function messagePage(title: string, message: string, lang = 'en'): string {
  return page(title, `<h1>${escapeHtml(title)}</h1><p role="alert">${escapeHtml(message)}</p>`, lang);
}
