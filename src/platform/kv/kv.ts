/**
 * The small key-value interface behind the cache, rate-limit counters,
 * single-use nonces and pub/sub. One implementation lives in the process, the
 * other in Redis so several nodes share it; both pass the same test suite.
 */
export interface KeyValueStore {
  readonly kind: 'memory' | 'redis';
  get(key: string): Promise<string | null>;
  /** The values of several keys in one call (one MGET on Redis), null for each missing one, in their order. */
  getMany(keys: readonly string[]): Promise<(string | null)[]>;
  set(key: string, value: string, ttlSecs?: number): Promise<void>;
  delete(key: string): Promise<void>;
  /** Stores the value only when the key is absent; true when it was stored. */
  setIfAbsent(key: string, value: string, ttlSecs: number): Promise<boolean>;
  /**
   * Counts one hit in the fixed window that contains `now` (window aligned to the Unix epoch).
   * The in-process store answers at once: this runs on every request, and a promise per request
   * was a measurable part of a cached read. Callers that do not care simply await it.
   */
  hitWindow(key: string, windowSecs: number, now?: number, hits?: number): WindowCount | Promise<WindowCount>;
  /** `hitWindow` for several windows in one round trip (a node's deferred rate-limit hits): a count per hit, in their order. */
  hitWindows(hits: readonly WindowHits[]): Promise<WindowCount[]>;
  /**
   * Keeps the newest of a series of records under each entry's `key`: its `value` is stored unless the key
   * holds a newer record (of equal ones, the last stored wins). Records are JSON objects with an ISO 8601 UTC
   * `timestamp` (compared as text); any other value (a placeholder such as "none") is older than every
   * record and never replaces one. Atomic across nodes, per key. With `ifAbsent: 'skip'` a missing key stays
   * missing ('absent'). One outcome per entry, in their order; every entry in one round trip (a batch of
   * GPS points offers one per device).
   */
  keepNewest(entries: readonly KeptRecord[], ttlSecs: number, ifAbsent: 'set' | 'skip'): Promise<KeepOutcome[]>;
  /** Takes back one hit of the window that contains `now` (an attempt claimed and then refunded). */
  unhitWindow(key: string, windowSecs: number, now: number): Promise<void>;
  /** Forgets the hits counted in the window that contains `now`. */
  resetWindow(key: string, windowSecs: number, now?: number): Promise<void>;
  /** Resolves with the number of nodes (subscribed connections) the store handed the message to. */
  publish(channel: string, message: string): Promise<number>;
  /** How many subscribers `channel` has now, on every node (Redis: its connections subscribed to it). */
  subscribers(channel: string): Promise<number>;
  /** Resolves once the subscription is active; the returned function ends it. */
  subscribe(channel: string, onMessage: (message: string) => void): Promise<() => Promise<void>>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** A record offered to `keepNewest`. */
export interface KeptRecord {
  key: string;
  value: string;
}

export type KeepOutcome = 'stored' | 'kept' | 'absent';

/** Hits of one window for `hitWindows`: the window of `windowSecs` that contains `at` (ms). */
export interface WindowHits {
  key: string;
  windowSecs: number;
  at: number;
  hits: number;
}

export interface WindowCount {
  count: number;
  /** Unix time (seconds) at which the window ends and the count starts over. */
  resetAt: number;
}

/** Whether `keepNewest` replaces `stored` with `candidate` (the Redis store runs the same rule in Lua). */
export function replaces(candidate: string, stored: string): boolean {
  const current = timestampOf(stored);
  if (current === undefined) return true;
  const next = timestampOf(candidate);
  return next !== undefined && next >= current;
}

function timestampOf(value: string): string | undefined {
  try {
    const timestamp = (JSON.parse(value) as { timestamp?: unknown } | null)?.timestamp;
    return typeof timestamp === 'string' ? timestamp : undefined;
  } catch {
    return undefined;
  }
}

export function windowOf(windowSecs: number, now: number): { index: number; resetAt: number } {
  const index = Math.floor(now / 1000 / windowSecs);
  return { index, resetAt: (index + 1) * windowSecs };
}

/**
 * The shared store did not answer (down, frozen, unreachable). Callers that can do without it catch
 * this and carry on (rate limits, caches); anything that needs it (single-use nonces and tickets)
 * lets it through, and the request is answered 503: single use cannot be promised without the store.
 */
export class KeyValueUnavailableError extends Error {
  constructor(cause: unknown) {
    super('The key-value store is unavailable', { cause });
    this.name = 'KeyValueUnavailableError';
  }
}
