import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  onRequestHookHandler,
  RouteOptions,
} from 'fastify';
import type { Config } from '../config.js';
import type { Caller } from './auth/caller.js';
import { sameSecret } from './auth/tokens.js';
import { logAtMostEvery } from './log-throttle.js';
import { localFirstCounter } from './rate-limit-counter.js';
import { RequestErrors, tooManyRequests, type AppError } from './http/errors.js';
import type { KeyValueStore, WindowCount } from './kv/index.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** An additional, stricter limit counted per identity on this route (e.g. POST /v1/gps). */
    extraRateLimit?: 'gpsWrite';
  }
  interface FastifyRequest {
    /** The tightest bucket counted so far (the one the X-RateLimit-* headers describe). */
    rateLimit: BucketState | null;
    /** Whether some bucket counted so far is half used (the headers are then sent). */
    rateLimitNear: boolean;
  }
}

const EXEMPT_EXACT = new Set(['/health', '/v1/health', '/v1/ws', '/v1/openapi.json', '/v1/schema', '/v1/swagger-ui']);
const EXEMPT_PREFIX = '/v1/swagger-ui/';

interface Bucket {
  key: string;
  limit: number;
}

interface BucketState {
  limit: number;
  remaining: number;
  resetAt: number;
}

/** Counts a request against its identity now; `done` gets the 429 when its bucket is spent. */
export type CountIdentity = (request: FastifyRequest, response: FastifyReply, done: (err?: Error) => void) => void;

export interface RateLimit {
  /**
   * Counts a request whose credential comes in its body (a tracker's form post, `credentialInBody`): the
   * identity hook leaves it uncounted when it has no caller yet, and the guard calls this once the body's
   * credential is resolved, so a valid key's post counts against the key, not against its address.
   */
  countDeferred: CountIdentity;
  /** Adds the hooks; after the guard's (`registerAuth`), whose onRequest resolves the caller they count. */
  register(): void;
}

/**
 * Fixed-window limits per identity (Limits in the interface spec): system keys
 * are never counted; API keys, users and anonymous IPs each have their own
 * limit, and a route may add a stricter one. Counters live in the key-value
 * store so every node shares them; when the store fails, requests go through.
 * The X-RateLimit-* headers describe the bucket with the fewest requests left
 * (on other responses than 429: see `rateLimitNear`).
 */
export function createRateLimit(app: FastifyInstance, kv: KeyValueStore, config: Config): RateLimit {
  const limits = config.rateLimit;
  if (!limits.enabled) return { countDeferred: (_request, _response, done) => done(), register: () => {} };
  const logFailure = logAtMostEvery();
  const callerBuckets = new WeakMap<Caller, Bucket>();
  // Redis would otherwise cost a round trip (and most of a cached read's CPU) on every request.
  const shared =
    kv.kind === 'redis'
      ? localFirstCounter(kv, (err) =>
          logFailure(app.log, 'error', { err }, 'rate-limit counter store unavailable; letting requests through'),
        )
      : undefined;
  if (shared) app.addHook('onClose', async () => shared.stop());

  /** A failing counter store lets requests through (fail-open), logged at most every few seconds. */
  function storeFailed(request: FastifyRequest, err: unknown): null {
    logFailure(request.log, 'error', { err }, 'rate-limit counter store unavailable; letting requests through');
    return null;
  }

  function exceeded(response: FastifyReply, state: BucketState): AppError {
    setHeaders(response, state);
    response.header('retry-after', String(Math.max(1, state.resetAt - Math.floor(Date.now() / 1000))));
    return RequestErrors.rate_limited(
      `Rate limit of ${state.limit} requests per ${limits.windowSecs} seconds exceeded`,
    );
  }

  /** Counts the hit, then lets the request on or refuses it (see `settle`). */
  function count(request: FastifyRequest, response: FastifyReply, bucket: Bucket, done: (err?: Error) => void): void {
    let counted: WindowCount | Promise<WindowCount>;
    try {
      counted = shared
        ? shared.hit(bucket.key, limits.windowSecs, bucket.limit)
        : kv.hitWindow(bucket.key, limits.windowSecs);
    } catch (err) {
      return settle(request, response, bucket, storeFailed(request, err), done);
    }
    // The in-process store answers at once; Redis answers later.
    if (typeof (counted as Promise<WindowCount>).then === 'function') {
      (counted as Promise<WindowCount>).then(
        (later) => settle(request, response, bucket, later, done),
        (err: unknown) => settle(request, response, bucket, storeFailed(request, err), done),
      );
    } else {
      settle(request, response, bucket, counted as WindowCount, done);
    }
  }

  /** Refuses a spent bucket with 429, and reports the tightest bucket so far in the headers. */
  function settle(
    request: FastifyRequest,
    response: FastifyReply,
    bucket: Bucket,
    counted: WindowCount | null,
    done: (err?: Error) => void,
  ): void {
    if (!counted) return done();
    const state = { limit: bucket.limit, remaining: bucket.limit - counted.count, resetAt: counted.resetAt };
    if (state.remaining < 0) return done(exceeded(response, state));
    if (!request.rateLimit || state.remaining < request.rateLimit.remaining) request.rateLimit = state;
    request.rateLimitNear ||= limits.headers === 'always' || state.remaining <= state.limit / 2;
    if (request.rateLimitNear) setHeaders(response, request.rateLimit);
    done();
  }

  const countIdentity: CountIdentity = (request, response, done) => {
    if (request.caller?.isSystem || isExempt(request.url)) return done();
    const bucket = identityBucket(request, config, callerBuckets);
    if (!bucket) return done();
    count(request, response, bucket, done);
  };

  function register(): void {
    // Node checks and writes every response header one by one: the three X-RateLimit-* headers cost about
    // 8% of the CPU of a cached read (GET /v1/gps/current). So by default responses other than 429 carry
    // them only once some bucket of the caller is at least half used, when a client has a reason to pace
    // itself (the IETF RateLimit fields draft suggests the same trade-off); RATE_LIMIT_HEADERS=always
    // sends them on every counted response. They always describe the tightest bucket.
    app.decorateRequest('rateLimit', null);
    app.decorateRequest('rateLimitNear', false);

    // Every request counts against its identity (callback-style hooks: this runs on every request); one
    // whose credential may still come in its body is counted once that is read (`countDeferred`).
    app.addHook('onRequest', (request, response, done) => {
      if (!request.caller && request.routeOptions.config?.auth?.credentialInBody) return done();
      countIdentity(request, response, done);
    });

    // A route's stricter limit counts after the identity's, on that route only.
    app.addHook('onRoute', (route: RouteOptions) => {
      if (route.config?.extraRateLimit !== 'gpsWrite') return;
      const countGpsWrite: onRequestHookHandler = (request, response, done) => {
        if (request.caller?.isSystem) return done();
        const who = request.caller?.apiKeyId ?? request.caller?.userId ?? request.ip;
        count(request, response, { key: `ratelimit:gps:${who}`, limit: limits.gpsWrite }, done);
      };
      route.onRequest = [...(route.onRequest ? [route.onRequest].flat() : []), countGpsWrite];
    });
  }

  return { countDeferred: countIdentity, register };
}

/**
 * Credentials neither cache knows are read from the database; made-up tokens would all be such reads.
 * The unknown ones count per client IP against the anonymous limit (X-Internal-Token skips it, as it does
 * that limit); beyond it the request gets 429 before the database is asked. Each lookup claims a hit first
 * (so a flood of made-up tokens is stopped however fast it comes) and a credential found gives it back: a
 * hundred valid keys not cached yet (after a restart) are no unknown credentials. A failing store lets it through.
 */
export function credentialLookupLimit(kv: KeyValueStore, config: Config, log: FastifyBaseLogger) {
  const limits = config.rateLimit;
  const logFailure = logAtMostEvery();
  return async (request: FastifyRequest): Promise<((found: boolean) => Promise<void>) | undefined> => {
    if (!limits.enabled || hasInternalToken(request, config.internalToken)) return undefined;
    const key = `ratelimit:lookup:${request.ip}`;
    const at = Date.now();
    let hit: WindowCount;
    try {
      hit = await kv.hitWindow(key, limits.windowSecs, at);
    } catch (err) {
      logFailure(log, 'warn', { err }, 'credential lookup counter unavailable; not limiting');
      return undefined;
    }
    if (hit.count > limits.anonymous) {
      throw tooManyRequests(
        RequestErrors.rate_limited,
        `Too many unknown credentials from this address; at most ${limits.anonymous} per ${limits.windowSecs} seconds`,
        hit.resetAt - Date.now() / 1000,
      );
    }
    return async (found) => {
      if (!found) return;
      await kv
        .unhitWindow(key, limits.windowSecs, at)
        .catch((err: unknown) =>
          logFailure(log, 'warn', { err }, 'credential lookup counter unavailable; not limiting'),
        );
    };
  };
}

/** `callerBuckets` keeps a credential's bucket while the credential cache keeps its caller (one key string, not one per request). */
function identityBucket(
  request: FastifyRequest,
  config: Config,
  callerBuckets: WeakMap<Caller, Bucket>,
): Bucket | null {
  const limits = config.rateLimit;
  const caller = request.caller;
  if (caller?.apiKeyId || caller?.userId) {
    let bucket = callerBuckets.get(caller);
    if (!bucket) {
      bucket = caller.apiKeyId
        ? { key: `ratelimit:key:${caller.apiKeyId}`, limit: limits.apiKey }
        : { key: `ratelimit:user:${caller.userId}`, limit: limits.user };
      callerBuckets.set(caller, bucket);
    }
    return bucket;
  }
  if (hasInternalToken(request, config.internalToken)) return null;
  return { key: `ratelimit:ip:${request.ip}`, limit: limits.anonymous };
}

/** X-Internal-Token skips only the anonymous limit, and only when a token is configured. */
function hasInternalToken(request: FastifyRequest, configured: string): boolean {
  const sent = request.headers['x-internal-token'];
  return configured !== '' && typeof sent === 'string' && sameSecret(sent, configured);
}

function setHeaders(response: FastifyReply, state: BucketState): void {
  response.header('x-ratelimit-limit', String(state.limit));
  response.header('x-ratelimit-remaining', String(Math.max(0, state.remaining)));
  response.header('x-ratelimit-reset', String(state.resetAt));
}

function isExempt(url: string): boolean {
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  // The console's assets are static and cached for good; a page load fetches a dozen of them anonymously.
  return EXEMPT_EXACT.has(path) || path.startsWith(EXEMPT_PREFIX) || path.startsWith('/console/assets/');
}
