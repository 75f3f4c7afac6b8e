/**
 * Load scenarios run against the service. Each names the request autocannon
 * repeats; `prepare` may create what the request needs (keys, data) through
 * the service's own API and return extra request options.
 */
import { BENCH_ADMIN } from './service-env.js';

let apiKey;

/** One API key for every authenticated scenario, created through the API as the bootstrap admin. */
async function benchKey(baseUrl) {
  if (apiKey) return apiKey;
  const login = await post(baseUrl, '/v1/auth/login', { identifier: BENCH_ADMIN.username, password: BENCH_ADMIN.password });
  const created = await post(baseUrl, '/v1/api-keys', { name: 'bench', scopes: ['roles:read', 'gps:read'] }, login.session_token);
  apiKey = created.key;
  return apiKey;
}

const withKey = async (baseUrl) => ({ headers: { authorization: `Bearer ${await benchKey(baseUrl)}` } });

export const scenarios = [
  { name: 'GET /v1/health', request: { method: 'GET', path: '/v1/health' } },
  { name: 'GET /v1 (anonymous)', request: { method: 'GET', path: '/v1' } },
  // The same cheap route with a credential: the difference is the cost of authentication.
  { name: 'GET /v1 (API key)', request: { method: 'GET', path: '/v1' }, prepare: withKey },
  { name: 'GET /v1/roles (API key)', request: { method: 'GET', path: '/v1/roles' }, prepare: withKey },
];

async function post(baseUrl, path, body, token) {
  const response = await fetch(baseUrl + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return response.json();
}
