/**
 * The small key-value interface behind the cache, rate-limit counters,
 * single-use nonces and pub/sub. One implementation lives in the process, the
 * other in Redis so several nodes share it; both pass the same test suite.
 */
export interface KeyValueStore {
  readonly kind: 'memory' | 'redis';
  get(key: string): Promise<string | null>;
  set(key: string, value: string, ttlSecs?: number): Promise<void>;
  delete(key: string): Promise<void>;
  /** Stores the value only when the key is absent; true when it was stored. */
  setIfAbsent(key: string, value: string, ttlSecs: number): Promise<boolean>;
  /**
   * Counts one hit in the fixed window that contains `now` (window aligned to the Unix epoch).
   * The in-process store answers at once: this runs on every request, and a promise per request
   * was a measurable part of a cached read. Callers that do not care simply await it.
   */
  hitWindow(key: string, windowSecs: number, now?: number): WindowCount | Promise<WindowCount>;
  /** Forgets the hits counted in the window that contains `now`. */
  resetWindow(key: string, windowSecs: number, now?: number): Promise<void>;
  publish(channel: string, message: string): Promise<void>;
  /** Resolves once the subscription is active; the returned function ends it. */
  subscribe(channel: string, onMessage: (message: string) => void): Promise<() => Promise<void>>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface WindowCount {
  count: number;
  /** Unix time (seconds) at which the window ends and the count starts over. */
  resetAt: number;
}

export function windowOf(windowSecs: number, now: number): { index: number; resetAt: number } {
  const index = Math.floor(now / 1000 / windowSecs);
  return { index, resetAt: (index + 1) * windowSecs };
}
