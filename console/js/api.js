// @ts-check
/**
 * The console's only way to the service: the public REST API (and /v1/gql, /v1/ws) with the
 * signed-in user's session token, so it can do nothing the user could not do with curl.
 *
 * Where the token lives: in this origin's localStorage, so a reload and every other tab of the console are
 * signed in too, until signing out (in any tab: the others hear it through the storage event) or the session's
 * end. Never in a cookie (no ambient credential, so no cross-site request can use it) and never in a URL (links,
 * history and logs stay free of it). Its exposure (docs/access.md, Security model): any script running on this
 * origin could read it, and it stays on the computer after the browser closes; the strict CSP (no inline script,
 * scripts only from this origin) is what keeps injected code from running at all.
 */
import { t } from './i18n.js';

/**
 * The types of a call come from the API's OpenAPI document (types/api.d.ts, generated): `get(`/v1/trips/${id}`)`
 * answers what GET /v1/trips/{id} answers, and a path no route has does not typecheck (types/routes.d.ts).
 * @typedef {import('./types/routes').Method} Method
 * @typedef {'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'} HttpMethod
 */
/** @template {Method} M @template {string} S @typedef {import('./types/routes').Known<M, S>} Known */
/** @template {Method} M @template {string} S @typedef {import('./types/routes').Answer<M, S>} Answer */
/** @template {Method} M @template {string} S @typedef {import('./types/routes').RequestBody<M, S>} RequestBody */
/** @template {string} S @typedef {import('./types/routes').Item<S>} Item */
/** @typedef {{ message?: string, code?: string, error?: string, [field: string]: unknown }} ErrorBody */

const TOKEN_KEY = 'waygate.session';

export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {ErrorBody | undefined} body
   */
  constructor(status, body) {
    super(body?.message ?? `HTTP ${status}`);
    this.status = status;
    this.code = body?.code ?? body?.error;
    this.body = body;
  }
}

/**
 * The API's refusal as an ApiError; a 429 in words a person reads ("try again in 40 seconds"), not the limit's JSON.
 * @param {Response} response
 * @param {ErrorBody | undefined} body
 */
function refusal(response, body) {
  if (response.status !== 429) return new ApiError(response.status, body);
  const seconds = Math.max(1, Number(response.headers.get('retry-after')) || 60);
  return new ApiError(429, { ...body, message: t('error.tooManyRequests', { seconds }) });
}

export const session = {
  get token() {
    return localStorage.getItem(TOKEN_KEY);
  },
  set token(value) {
    if (value) localStorage.setItem(TOKEN_KEY, value);
    else localStorage.removeItem(TOKEN_KEY);
  },
};

// A tab signed in before the token moved to localStorage keeps its session.
const held = sessionStorage.getItem(TOKEN_KEY);
if (held) {
  session.token ??= held;
  sessionStorage.removeItem(TOKEN_KEY);
}

/**
 * Signing in or out in another tab of the console: `handler` gets whether a session is held now.
 * @param {(signedIn: boolean) => void} handler
 */
export const whenOtherTabChanges = (handler) =>
  window.addEventListener('storage', (event) => {
    if (event.key === TOKEN_KEY || event.key === null) handler(Boolean(session.token));
  });

let onUnauthorized = () => {};
/**
 * What happens when the session is no longer accepted (expired, revoked, banned): back to sign-in.
 * @param {() => void} handler
 */
export const whenUnauthorized = (handler) => {
  onUnauthorized = handler;
};

/**
 * A request to the API with the session's token (unless `signedIn` is false): the parsed JSON answer, or an
 * ApiError with the API's message. (Untyped: the exports below type it by route.)
 * @param {HttpMethod} method
 * @param {string} path
 * @param {unknown} [body]
 * @param {{ signedIn?: boolean }} [options]
 * @returns {Promise<any>}
 */
async function request(method, path, body, { signedIn = true } = {}) {
  /** @type {Record<string, string>} */
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

/**
 * A request typed by the route `path` is of: the body it takes and what it answers.
 * @template {HttpMethod} HM
 * @template {string} S
 * @param {HM} method
 * @param {Known<Lowercase<HM>, S>} path
 * @param {RequestBody<Lowercase<HM>, S>} [body]
 * @param {{ signedIn?: boolean }} [options]
 * @returns {Promise<Answer<Lowercase<HM>, S>>}
 */
export const api = (method, path, body, options) => request(method, path, body, options);

/**
 * @template {string} S
 * @param {Known<'get', S>} path
 * @returns {Promise<Answer<'get', S>>}
 */
export const get = (path) => request('GET', path);
/**
 * (Without a body: `{}`, as the routes that take none accept.)
 * @template {string} S
 * @param {Known<'post', S>} path
 * @param {RequestBody<'post', S>} [body]
 * @returns {Promise<Answer<'post', S>>}
 */
export const post = (path, body) => request('POST', path, body ?? {});
/**
 * @template {string} S
 * @param {Known<'patch', S>} path
 * @param {RequestBody<'patch', S>} body
 * @returns {Promise<Answer<'patch', S>>}
 */
export const patch = (path, body) => request('PATCH', path, body);
/**
 * @template {string} S
 * @param {Known<'put', S>} path
 * @param {RequestBody<'put', S>} body
 * @returns {Promise<Answer<'put', S>>}
 */
export const put = (path, body) => request('PUT', path, body);
/**
 * @template {string} S
 * @param {Known<'delete', S>} path
 * @returns {Promise<Answer<'delete', S>>}
 */
export const del = (path) => request('DELETE', path);

/**
 * Every item of a paginated list (pages of 100, up to `max` items): the first page says how many pages there
 * are, the others are then asked for four at a time (a thousand devices are ten pages: one round trip, not ten).
 * @template {string} S
 * @param {Known<'get', S>} path
 * @returns {Promise<Item<S>[]>}
 */
export async function all(path, max = 2000) {
  const separator = path.includes('?') ? '&' : '?';
  /** @param {number} page @returns {Promise<{ data: Item<S>[], pagination?: { total_pages: number } }>} */
  const pageOf = (page) => request('GET', `${path}${separator}page=${page}&limit=100`);
  const first = await pageOf(1);
  const pages = Math.min(first.pagination?.total_pages ?? 1, Math.ceil(max / 100));
  const items = [...first.data];
  for (let page = 2; page <= pages; page += 4) {
    const batch = await Promise.all([page, page + 1, page + 2, page + 3].filter((n) => n <= pages).map(pageOf));
    for (const result of batch) items.push(...result.data);
  }
  return items.slice(0, max);
}

/**
 * Every device the user may see (GET /v1/map/devices: pages of 5,000, ten thousand devices in two requests where
 * the numbered list takes a hundred), for the map and the device pickers. At most 50,000.
 * @returns {Promise<import('./types/routes').Schema<'Device'>[]>}
 */
export async function allDevices() {
  const devices = [];
  /** @type {string | null} */
  let after = null;
  do {
    /** @type {Answer<'get', '/v1/map/devices'>} */
    const page = await get(after ? `/v1/map/devices?after=${after}` : '/v1/map/devices');
    devices.push(...page.data);
    after = page.next;
  } while (after && devices.length < 50_000);
  return devices;
}

/**
 * A GraphQL query; errors come back as ApiError with the first error's message. (Its answer is not typed: the
 * types come from the REST routes' OpenAPI document.)
 * @param {string} query
 * @param {Record<string, unknown>} [variables]
 * @returns {Promise<any>}
 */
export async function gql(query, variables) {
  /** @type {{ data?: unknown, errors?: { message: string, extensions?: { status?: number, code?: string } }[] }} */
  const result = await request('POST', '/v1/gql', { query, variables });
  if (result.errors?.length)
    throw new ApiError(result.errors[0].extensions?.status ?? 400, {
      message: result.errors[0].message,
      code: result.errors[0].extensions?.code,
    });
  return result.data;
}

/**
 * A request whose answer is a file or a stream: the raw Response, or ApiError with the API's message.
 * @param {HttpMethod} method
 * @param {string} path
 * @param {BodyInit} [body]
 * @returns {Promise<Response>}
 */
export async function fetchRaw(method, path, body) {
  /** @type {Record<string, string>} */
  const headers = { authorization: `Bearer ${session.token}` };
  if (body !== undefined) headers['content-type'] = 'application/octet-stream';
  const response = await fetch(path, { method, headers, body });
  if (response.ok) return response;
  const text = await response.text();
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = { message: text || response.statusText };
  }
  if (response.status === 401) onUnauthorized();
  throw refusal(response, parsed);
}

/**
 * Saves a file the API answers (an export) under the name its Content-Disposition gives. The token goes in
 * the Authorization header, never the URL, so the download is fetched and handed over as a blob.
 * @param {string} path
 * @param {string} fallbackName
 * @returns {Promise<string>} the file's name
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
