import type { BrowserContext } from 'playwright-core';

/**
 * A stand-in for Cloudflare's Turnstile widget in Chromium (the tests have no network): requests to
 * challenges.cloudflare.com are answered here, at that origin, so the page's CSP is checked as it would
 * be for the real widget. api.js puts an iframe from that origin into the element `render` is given;
 * the frame's button "Verify you are human" posts the token 'human' to the page (what the fake
 * siteverify of bot-verifier.ts accepts), which api.js hands to the page's callback, as Turnstile does.
 */
const ORIGIN = 'https://challenges.cloudflare.com';

const API_JS = `(() => {
  const widgets = [];
  window.addEventListener('message', (event) => {
    if (event.origin !== '${ORIGIN}') return;
    const widget = widgets.find((w) => w.frame.contentWindow === event.source);
    if (widget && event.data && event.data.token) widget.options.callback(event.data.token);
  });
  function frame(widget) {
    const element = document.createElement('iframe');
    element.src = '${ORIGIN}/fake-challenge?sitekey=' + encodeURIComponent(widget.options.sitekey);
    element.title = 'Widget containing a Cloudflare security challenge';
    element.width = '300';
    element.height = '65';
    widget.container.replaceChildren(element);
    widget.frame = element;
  }
  window.turnstile = {
    render(container, options) {
      const widget = { container, options };
      widgets.push(widget);
      frame(widget);
      return String(widgets.length - 1);
    },
    reset(id) { frame(widgets[Number(id)]); },
  };
})();`;

const CHALLENGE = `<!doctype html><html lang="en"><title>Challenge</title><body>
<button type="button" id="verify">Verify you are human</button>
<script>document.getElementById('verify').onclick = () => parent.postMessage({ token: 'human' }, '*');</script>
</body></html>`;

export async function fakeTurnstileWidget(context: BrowserContext): Promise<void> {
  await context.route(`${ORIGIN}/**`, (route) => {
    const { pathname } = new URL(route.request().url());
    if (pathname === '/turnstile/v0/api.js') return route.fulfill({ contentType: 'text/javascript', body: API_JS });
    if (pathname === '/fake-challenge') return route.fulfill({ contentType: 'text/html', body: CHALLENGE });
    return route.fulfill({ status: 404, body: '' });
  });
}
