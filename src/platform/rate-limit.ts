import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import { sameSecret } from './auth/tokens.js';
import { AppError, tooManyRequests } from './http/errors.js';
import type { KeyValueStore, WindowCount } from './kv/index.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** An additional, stricter limit counted per identity on this route (e.g. POST /v1/gps). */
    extraRateLimit?: 'gpsWrite';
  }
}

const EXEMPT_EXACT = new Set(['/health', '/v1/health', '/v1/ws', '/v1/openapi.json', '/v1/schema', '/v1/swagger-ui']);
const EXEMPT_PREFIX = '/v1/swagger-ui/';
const FAILURE_LOG_INTERVAL_MS = 10_000;

interface Bucket {
  key: string;
  limit: number;
}

/**
 * Fixed-window limits per identity (Limits in the interface spec): system keys
 * are never counted; API keys, users and anonymous IPs each have their own
 * limit, and a route may add a stricter one. Counters live in the key-value
 * store so every node shares them; when the store fails, requests go through.
 */
export function registerRateLimit(app: FastifyInstance, kv: KeyValueStore, config: Config): void {
  const limits = config.rateLimit;
  if (!limits.enabled) return;
  let lastFailureLog = 0;

  app.addHook('onRequest', async (request, response) => {
    if (isExempt(request.url) || request.caller?.isSystem) return;
    const buckets = bucketsFor(request, config);
    if (buckets.length === 0) return;
    let counts: WindowCount[];
    try {
      // Most requests count in one bucket: no Promise.all for them (this runs on every request).
      counts = buckets.length === 1 ? [await kv.hitWindow(buckets[0]!.key, limits.windowSecs)] : await Promise.all(buckets.map((bucket) => kv.hitWindow(bucket.key, limits.windowSecs)));
    } catch (err) {
      if (Date.now() - lastFailureLog > FAILURE_LOG_INTERVAL_MS) {
        lastFailureLog = Date.now();
        request.log.error({ err }, 'rate-limit counter store unavailable; letting requests through');
      }
      return;
    }
    // The headers describe the tightest bucket: the one with the fewest requests left.
    let tightest = { limit: 0, remaining: Infinity, resetAt: 0, exceeded: false };
    for (let i = 0; i < buckets.length; i++) {
      const { count, resetAt } = counts[i]!;
      const { limit } = buckets[i]!;
      const exceeded = count > limit;
      if (exceeded || (!tightest.exceeded && limit - count < tightest.remaining)) tightest = { limit, remaining: limit - count, resetAt, exceeded };
      if (exceeded) break;
    }
    setHeaders(response, tightest);
    if (tightest.exceeded) {
      response.header('retry-after', String(Math.max(1, tightest.resetAt - Math.floor(Date.now() / 1000))));
      throw new AppError(429, `Rate limit of ${tightest.limit} requests per ${limits.windowSecs} seconds exceeded`);
    }
  });
}

/**
 * Credentials neither cache knows are read from the database; made-up tokens would all be such reads.
 * They count per client IP against the anonymous limit (X-Internal-Token skips it, as it does that
 * limit); beyond it the request gets 429 before the database is asked. A failing store lets it through.
 */
export function credentialLookupLimit(kv: KeyValueStore, config: Config, log: FastifyBaseLogger) {
  const limits = config.rateLimit;
  return async (request: FastifyRequest): Promise<void> => {
    if (!limits.enabled || hasInternalToken(request, config.internalToken)) return;
    let hit: WindowCount;
    try {
      hit = await kv.hitWindow(`ratelimit:lookup:${request.ip}`, limits.windowSecs);
    } catch (err) {
      log.warn({ err }, 'credential lookup counter unavailable; not limiting');
      return;
    }
    if (hit.count > limits.anonymous) {
      throw tooManyRequests(`Too many unknown credentials from this address; at most ${limits.anonymous} per ${limits.windowSecs} seconds`, hit.resetAt - Date.now() / 1000);
    }
  };
}

function bucketsFor(request: FastifyRequest, config: Config): Bucket[] {
  const limits = config.rateLimit;
  const caller = request.caller;
  let identity: Bucket | null;
  if (caller?.apiKeyId) identity = { key: `ratelimit:key:${caller.apiKeyId}`, limit: limits.apiKey };
  else if (caller?.userId) identity = { key: `ratelimit:user:${caller.userId}`, limit: limits.user };
  else if (hasInternalToken(request, config.internalToken)) identity = null;
  else identity = { key: `ratelimit:ip:${request.ip}`, limit: limits.anonymous };

  const buckets = identity ? [identity] : [];
  if (request.routeOptions.config?.extraRateLimit === 'gpsWrite') {
    const who = caller?.apiKeyId ?? caller?.userId ?? request.ip;
    buckets.push({ key: `ratelimit:gps:${who}`, limit: limits.gpsWrite });
  }
  return buckets;
}

/** X-Internal-Token skips only the anonymous limit, and only when a token is configured. */
function hasInternalToken(request: FastifyRequest, configured: string): boolean {
  const sent = request.headers['x-internal-token'];
  return configured !== '' && typeof sent === 'string' && sameSecret(sent, configured);
}

function setHeaders(response: FastifyReply, state: { limit: number; remaining: number; resetAt: number }): void {
  response.header('x-ratelimit-limit', String(state.limit));
  response.header('x-ratelimit-remaining', String(Math.max(0, state.remaining)));
  response.header('x-ratelimit-reset', String(state.resetAt));
}

function isExempt(url: string): boolean {
  const path = url.split('?')[0]!;
  return EXEMPT_EXACT.has(path) || path.startsWith(EXEMPT_PREFIX);
}
