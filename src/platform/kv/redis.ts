import { Redis, ReplyError } from 'ioredis';
import {
  KeyValueUnavailableError,
  windowOf,
  type KeepOutcome,
  type KeptRecord,
  type KeyValueStore,
  type WindowCount,
  type WindowHits,
} from './kv.js';

/**
 * `keepNewest` in one step on the server, for every key given: the same rule as `replaces` in kv.ts.
 * KEYS: the keys; ARGV: the TTL in milliseconds, the `ifAbsent` mode, then a value per key.
 */
const KEEP_NEWEST = `
local function timestamp(text)
  local ok, value = pcall(cjson.decode, text)
  if ok and type(value) == 'table' and type(value.timestamp) == 'string' then return value.timestamp end
  return nil
end
local outcomes = {}
for i, key in ipairs(KEYS) do
  local candidate = ARGV[i + 2]
  local stored = redis.call('GET', key)
  local outcome = nil
  if not stored then
    if ARGV[2] == 'skip' then outcome = 'absent' end
  else
    local current = timestamp(stored)
    if current then
      local next = timestamp(candidate)
      if not next or next < current then outcome = 'kept' end
    end
  end
  if not outcome then
    redis.call('SET', key, candidate, 'PX', ARGV[1])
    outcome = 'stored'
  end
  outcomes[i] = outcome
end
return outcomes
`;

/**
 * Counts hits of fixed windows in one step: KEYS are the windows' keys, ARGV the hits and the window's end
 * (Unix ms) of each, in turn. A script rather than MULTI: one command for Redis to run, however many windows.
 */
const HIT_WINDOWS = `
local counts = {}
for i, key in ipairs(KEYS) do
  counts[i] = redis.call('INCRBY', key, ARGV[2 * i - 1])
  redis.call('PEXPIREAT', key, ARGV[2 * i])
end
return counts
`;

/** The client with KEEP_NEWEST defined: sent as EVALSHA, the script itself only when Redis lacks it. */
type ScriptedRedis = Redis & {
  /** The number of keys, the keys, then ARGV (see KEEP_NEWEST). */
  keepNewest(...args: (string | number)[]): Promise<KeepOutcome[]>;
  /** The number of keys, the keys, then ARGV (see HIT_WINDOWS). */
  hitWindows(...args: (string | number)[]): Promise<number[]>;
};

export interface RedisStoreOptions {
  url: string;
  /** Prepended to every key and channel, so several deployments (or test runs) can share one Redis. */
  namespace?: string;
}

/**
 * Redis-backed store shared by every node. Commands fail fast while Redis is
 * down (no offline queue) so callers such as the rate limiter can fail open
 * instead of hanging.
 */
export const COMMAND_TIMEOUT_MS = 500;
/** Keys per call of a many-key script (see #inScriptCalls). */
export const KEYS_PER_SCRIPT = 500;
/** After this many commands in a row found Redis unreachable (not an error Redis answered)… */
export const BREAKER_FAILURES = 3;
/** …commands fail at once for this long rather than each waiting out the timeout; then one is let through to see. */
export const BREAKER_OPEN_MS = 2000;

export class RedisStore implements KeyValueStore {
  readonly kind = 'redis';
  readonly #client: ScriptedRedis;
  readonly #subscriber: Redis;
  readonly #ns: string;
  readonly #handlers = new Map<string, Set<(message: string) => void>>();
  #failuresInARow = 0;
  #openUntil = 0;

  constructor(options: RedisStoreOptions) {
    const connection = {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      retryStrategy: (attempt: number) => Math.min(attempt * 200, 2000),
    };
    // A Redis that hangs (frozen, or a network that drops packets) must not hang every request with it:
    // a command without an answer fails after this long, and callers fall back as for a Redis that is down.
    this.#client = new Redis(options.url, { ...connection, commandTimeout: COMMAND_TIMEOUT_MS }) as ScriptedRedis;
    // Without numberOfKeys: each call says how many keys it passes.
    this.#client.defineCommand('keepNewest', { lua: KEEP_NEWEST });
    this.#client.defineCommand('hitWindows', { lua: HIT_WINDOWS });
    // The subscriber queues its SUBSCRIBE commands until it is connected, and re-subscribes after a reconnect.
    this.#subscriber = new Redis(options.url, { ...connection, enableOfflineQueue: true, maxRetriesPerRequest: null });
    this.#ns = options.namespace ?? '';
    // ioredis reports connection failures as 'error' events; commands reject on their own.
    this.#client.on('error', () => {});
    this.#subscriber.on('error', () => {});
    this.#subscriber.on('message', (channel: string, message: string) => {
      for (const handler of this.#handlers.get(channel) ?? []) handler(message);
    });
  }

  async connect(): Promise<void> {
    await Promise.all([this.#client.connect(), this.#subscriber.connect()]);
  }

  get(key: string): Promise<string | null> {
    return this.#answer(() => this.#client.get(this.#ns + key));
  }

  getMany(keys: readonly string[]): Promise<(string | null)[]> {
    return this.#inScriptCalls(keys, (slice) => this.#client.mget(slice.map((key) => this.#ns + key)));
  }

  set(key: string, value: string, ttlSecs?: number): Promise<void> {
    return this.#answer(async () => {
      if (ttlSecs === undefined) await this.#client.set(this.#ns + key, value);
      else await this.#client.set(this.#ns + key, value, 'PX', Math.max(1, Math.round(ttlSecs * 1000)));
    });
  }

  delete(key: string): Promise<void> {
    return this.#answer(async () => void (await this.#client.del(this.#ns + key)));
  }

  setIfAbsent(key: string, value: string, ttlSecs: number): Promise<boolean> {
    return this.#answer(
      async () =>
        (await this.#client.set(this.#ns + key, value, 'PX', Math.max(1, Math.round(ttlSecs * 1000)), 'NX')) === 'OK',
    );
  }

  keepNewest(entries: readonly KeptRecord[], ttlSecs: number, ifAbsent: 'set' | 'skip'): Promise<KeepOutcome[]> {
    const ttlMs = String(Math.max(1, Math.round(ttlSecs * 1000)));
    return this.#inScriptCalls(entries, (chunk) => {
      const keys = chunk.map(({ key }) => this.#ns + key);
      return this.#client.keepNewest(keys.length, ...keys, ttlMs, ifAbsent, ...chunk.map(({ value }) => value));
    });
  }

  async hitWindow(key: string, windowSecs: number, now = Date.now(), hits = 1): Promise<WindowCount> {
    return (await this.hitWindows([{ key, windowSecs, at: now, hits }]))[0]!;
  }

  hitWindows(hits: readonly WindowHits[]): Promise<WindowCount[]> {
    const windows = hits.map(({ key, windowSecs, at, hits: count }) => {
      const { index, resetAt } = windowOf(windowSecs, at);
      return { key: `${this.#ns}${key}:${index}`, count, resetAt };
    });
    return this.#inScriptCalls(windows, async (chunk) => {
      const counts = await this.#client.hitWindows(
        chunk.length,
        ...chunk.map(({ key }) => key),
        ...chunk.flatMap(({ count, resetAt }) => [count, resetAt * 1000]),
      );
      return counts.map((count, i) => ({ count: Number(count), resetAt: chunk[i]!.resetAt }));
    });
  }

  /**
   * Runs a many-key script (or MGET) over `items` in calls of at most KEYS_PER_SCRIPT keys (sent together, answered in
   * order): a script blocks Redis while it runs, and one call over 10,000 keys would hold every other client
   * for tens of milliseconds. One answer per item, in their order. Should one call fail, the whole answer fails
   * (the other calls may have been applied), as when Redis is down: callers treat it so (a cache left to fill on
   * the next read, rate-limit hits lost while the limiter fails open).
   */
  async #inScriptCalls<T, R>(items: readonly T[], call: (chunk: readonly T[]) => Promise<R[]>): Promise<R[]> {
    if (items.length === 0) return [];
    const chunks: (readonly T[])[] = [];
    for (let start = 0; start < items.length; start += KEYS_PER_SCRIPT)
      chunks.push(items.slice(start, start + KEYS_PER_SCRIPT));
    return (await this.#answer(() => Promise.all(chunks.map(call)))).flat();
  }

  unhitWindow(key: string, windowSecs: number, now: number): Promise<void> {
    return this.#answer(async () => {
      const windowKey = `${this.#ns}${key}:${windowOf(windowSecs, now).index}`;
      // A window that has expired meanwhile must not come back as a negative count.
      if ((await this.#client.decr(windowKey)) <= 0) await this.#client.del(windowKey);
    });
  }

  resetWindow(key: string, windowSecs: number, now = Date.now()): Promise<void> {
    return this.#answer(
      async () => void (await this.#client.del(`${this.#ns}${key}:${windowOf(windowSecs, now).index}`)),
    );
  }

  publish(channel: string, message: string): Promise<number> {
    return this.#answer(() => this.#client.publish(this.#ns + channel, message));
  }

  subscribers(channel: string): Promise<number> {
    return this.#answer(async () => {
      const [, count] = (await this.#client.pubsub('NUMSUB', this.#ns + channel)) as [string, number];
      return Number(count);
    });
  }

  /**
   * Runs a command (any failure, down, timed out or refused, as the one error callers look for), turning any failure into KeyValueUnavailableError. A circuit breaker: while Redis
   * is unreachable (frozen, down, cut off), requests would each wait COMMAND_TIMEOUT_MS for it; after
   * BREAKER_FAILURES such failures in a row commands fail at once for BREAKER_OPEN_MS, then one tries
   * again. Errors Redis itself answered (ReplyError) say nothing about reachability and do not count.
   */
  async #answer<T>(command: () => Promise<T>): Promise<T> {
    if (this.#failuresInARow >= BREAKER_FAILURES && Date.now() < this.#openUntil) {
      throw new KeyValueUnavailableError(new Error('Redis circuit breaker open'));
    }
    try {
      const result = await command();
      this.#failuresInARow = 0;
      return result;
    } catch (err) {
      if (!(err instanceof ReplyError) && ++this.#failuresInARow >= BREAKER_FAILURES)
        this.#openUntil = Date.now() + BREAKER_OPEN_MS;
      throw new KeyValueUnavailableError(err);
    }
  }

  async subscribe(channel: string, onMessage: (message: string) => void): Promise<() => Promise<void>> {
    const name = this.#ns + channel;
    let handlers = this.#handlers.get(name);
    if (!handlers) {
      handlers = new Set();
      this.#handlers.set(name, handlers);
      await this.#subscriber.subscribe(name);
    }
    handlers.add(onMessage);
    return async () => {
      handlers.delete(onMessage);
      if (handlers.size === 0 && this.#handlers.get(name) === handlers) {
        this.#handlers.delete(name);
        // While Redis is unreachable the command would wait in the offline queue; don't wait for it.
        const unsubscribed = this.#subscriber.unsubscribe(name).catch(() => {});
        if (this.#subscriber.status === 'ready') await unsubscribed;
      }
    };
  }

  async ping(): Promise<void> {
    await this.#client.ping();
  }

  async close(): Promise<void> {
    this.#client.disconnect();
    this.#subscriber.disconnect();
  }
}
