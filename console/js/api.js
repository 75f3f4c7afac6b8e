/**
 * The console's only way to the service: the public REST API (and /v1/gql, /v1/ws) with the
 * signed-in user's session token, so it can do nothing the user could not do with curl.
 *
 * Where the token lives: in sessionStorage of this tab, never in a cookie (no ambient credential, so
 * no cross-site request can use it) and never in a URL (links, history and logs stay free of it).
 * It is gone when the tab closes; a reload of the tab keeps it. The strict CSP (no inline script,
 * scripts only from this origin) is what keeps injected code from reading it.
 */
const TOKEN_KEY = 'waygate.session';

export class ApiError extends Error {
  constructor(status, body) {
    super(body?.message ?? `HTTP ${status}`);
    this.status = status;
    this.code = body?.code ?? body?.error;
    this.body = body;
  }
}

export const session = {
  get token() { return sessionStorage.getItem(TOKEN_KEY); },
  set token(value) {
    if (value) sessionStorage.setItem(TOKEN_KEY, value);
    else sessionStorage.removeItem(TOKEN_KEY);
  },
};

let onUnauthorized = () => {};
/** What happens when the session is no longer accepted (expired, revoked, banned): back to sign-in. */
export const whenUnauthorized = (handler) => { onUnauthorized = handler; };

export async function api(method, path, body, { signedIn = true } = {}) {
  const headers = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (signedIn && session.token) headers.authorization = `Bearer ${session.token}`;
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  let parsed;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = { message: text };
  }
  if (!response.ok) {
    if (response.status === 401 && signedIn && session.token) onUnauthorized();
    throw new ApiError(response.status, parsed);
  }
  return parsed;
}

export const get = (path) => api('GET', path);
export const post = (path, body) => api('POST', path, body ?? {});
export const patch = (path, body) => api('PATCH', path, body);
export const put = (path, body) => api('PUT', path, body);
export const del = (path) => api('DELETE', path);

/** Every item of a paginated list (pages of 100). */
export async function all(path, max = 2000) {
  const items = [];
  for (let page = 1; items.length < max; page++) {
    const separator = path.includes('?') ? '&' : '?';
    const result = await get(`${path}${separator}page=${page}&limit=100`);
    items.push(...result.data);
    if (!result.pagination || page >= result.pagination.total_pages) break;
  }
  return items;
}

/** A GraphQL query; errors come back as ApiError with the first error's message. */
export async function gql(query, variables) {
  const result = await api('POST', '/v1/gql', { query, variables });
  if (result.errors?.length) throw new ApiError(result.errors[0].extensions?.status ?? 400, { message: result.errors[0].message, code: result.errors[0].extensions?.code });
  return result.data;
}

/** A request whose answer is a file or a stream: the raw Response, or ApiError with the API's message. */
export async function fetchRaw(method, path, body) {
  const headers = { authorization: `Bearer ${session.token}` };
  if (body !== undefined) headers['content-type'] = 'application/octet-stream';
  const response = await fetch(path, { method, headers, body });
  if (response.ok) return response;
  const text = await response.text();
  let parsed;
  try { parsed = JSON.parse(text); } catch { parsed = { message: text || response.statusText }; }
  if (response.status === 401) onUnauthorized();
  throw new ApiError(response.status, parsed);
}

/**
 * Saves a file the API answers (an export) under the name its Content-Disposition gives. The token goes in
 * the Authorization header, never the URL, so the download is fetched and handed over as a blob.
 */
export async function download(path, fallbackName) {
  const response = await fetchRaw('GET', path);
  const name = /filename="([^"]+)"/.exec(response.headers.get('content-disposition') ?? '')?.[1] ?? fallbackName;
  const url = URL.createObjectURL(await response.blob());
  const link = Object.assign(document.createElement('a'), { href: url, download: name });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
  return name;
}
