/**
 * The part of a browser the OAuth pages need, over real HTTP: cookies (by name, as one site), redirects
 * followed by hand so each hop can be checked, and form posts. Redirects leaving the base URL are
 * returned, not followed: that is where the relying party receives its code.
 */
export class FormBrowser {
  readonly #cookies = new Map<string, string>();

  constructor(private readonly base: string) {}

  async get(url: string): Promise<Response> {
    return this.#request(url, { method: 'GET' });
  }

  async post(url: string, form: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
    return this.#request(url, {
      method: 'POST',
      body: new URLSearchParams(form),
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    });
  }

  /** Follows redirects within the service; returns the last response and the URL it answered. */
  async follow(response: Response): Promise<{ response: Response; url: string }> {
    let current = response;
    let url = response.url;
    while (current.status === 303 || current.status === 302) {
      url = new URL(current.headers.get('location')!, this.base).href;
      if (!url.startsWith(this.base)) return { response: current, url };
      current = await this.get(url);
    }
    return { response: current, url };
  }

  async #request(url: string, init: RequestInit): Promise<Response> {
    const cookie = [...this.#cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const response = await fetch(new URL(url, this.base), {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as object), ...(cookie ? { cookie } : {}) },
    });
    for (const header of response.headers.getSetCookie()) {
      const [pair] = header.split(';');
      const [name, ...value] = pair!.split('=');
      if (/expires=Thu, 01 Jan 1970/i.test(header)) this.#cookies.delete(name!.trim());
      else this.#cookies.set(name!.trim(), value.join('='));
    }
    return response;
  }
}

/** The value of a hidden or named form field in a page. */
export function formField(html: string, name: string): string | undefined {
  const input = new RegExp(`<input[^>]* name="${name}"[^>]*>`).exec(html)?.[0];
  return input && /value="([^"]*)"/.exec(input)?.[1];
}

/** The action of the page's form. */
export function formAction(html: string): string {
  const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1];
  if (!action) throw new Error(`no form in page: ${html.slice(0, 300)}`);
  return action.replaceAll('&amp;', '&');
}
