/**
 * The console's only way to the service: the public REST API (and /v1/gql, /v1/ws) with the
 * signed-in user's session token, so it can do nothing the user could not do with curl.
 *
 * Where the token lives: in sessionStorage of this tab, never in a cookie (no ambient credential, so
 * no cross-site request can use it) and never in a URL (links, history and logs stay free of it).
 * It is gone when the tab closes; a reload of the tab keeps it. The strict CSP (no inline script,
 * scripts only from this origin) is what keeps injected code from reading it.
 */
import { t } from './i18n.js';

const TOKEN_KEY = 'waygate.session';

export class ApiError extends Error {
  constructor(status, body) {
    super(body?.message ?? `HTTP ${status}`);
    this.status = status;
    this.code = body?.code ?? body?.error;
    this.body = body;
  }
}

/** The API's refusal as an ApiError; a 429 in words a person reads ("try again in 40 seconds"), not the limit's JSON. */
function refusal(response, body) {
  if (response.status !== 429) return new ApiError(response.status, body);
  const seconds = Math.max(1, Number(response.headers.get('retry-after')) || 60);
  return new ApiError(429, { ...body, message: t('error.tooManyRequests', { seconds }) });
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
    throw refusal(response, parsed);
  }
  return parsed;
}

export const get = (path) => api('GET', path);
export const post = (path, body) => api('POST', path, body ?? {});
export const patch = (path, body) => api('PATCH', path, body);
export const put = (path, body) => api('PUT', path, body);
export const del = (path) => api('DELETE', path);

/**
 * Every item of a paginated list (pages of 100, up to `max` items): the first page says how many pages there
 * are, the others are then asked for four at a time (a thousand devices are ten pages: one round trip, not ten).
 */
export async function all(path, max = 2000) {
  const separator = path.includes('?') ? '&' : '?';
  const pageOf = (page) => get(`${path}${separator}page=${page}&limit=100`);
  const first = await pageOf(1);
  const pages = Math.min(first.pagination?.total_pages ?? 1, Math.ceil(max / 100));
  const items = [...first.data];
  for (let page = 2; page <= pages; page += 4) {
    const batch = await Promise.all([page, page + 1, page + 2, page + 3].filter((n) => n <= pages).map(pageOf));
    for (const result of batch) items.push(...result.data);
  }
  return items.slice(0, max);
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
  throw refusal(response, parsed);
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
