/**
 * Load scenarios run against the service. Each names the request autocannon
 * repeats; `prepare` may create what the request needs (keys, data) through
 * the service's own API and return extra request options.
 */
export const scenarios = [
  {
    name: 'GET /v1/health',
    request: { method: 'GET', path: '/v1/health' },
  },
];
