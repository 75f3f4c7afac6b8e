import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import type { KeyValueStore } from './kv.js';
import { Broadcast } from './broadcast.js';
import { logAtMostEvery } from '../log-throttle.js';

/** How one cache keeps its entries. */
export interface CacheOptions<T> {
  /** Seconds an entry lives in the shared store. */
  sharedTtlSecs: number;
  /** Milliseconds an entry lives in a process's own map: bounds staleness when an invalidation message is lost. */
  localTtlMs: number;
  maxLocalEntries?: number;
  /** Rebuilds a value from its parsed JSON (dates come back as strings); the parsed JSON by default. */
  decode?: (json: unknown) => T;
  /**
   * Told of every invalidation on this node, its own and those of other nodes (pub/sub), once the keys are
   * forgotten here: for holders of a value beyond a request (an open WebSocket's view of what it may see).
   */
  onInvalidated?: (keys: string[]) => void;
}

/** A read-through cache of values loaded from the database, shared by every node. */
export interface Cache<T> {
  /**
   * The cached value, or what `load` answers (cached unless undefined or an invalidation overlapped it).
   * Every reader gets the same object: treat it as read-only.
   */
  get(key: string, load: () => Promise<T | undefined>): Promise<T | undefined>;
  /**
   * Forgets the keys on every node, and keeps them from being cached again for a few seconds: the
   * write that prompted this may still be in an open transaction, and a read before its commit
   * would otherwise put the old value back. Call it when the write is made, commit or not.
   */
  invalidate(keys: string[]): Promise<void>;
}

export interface CacheStats {
  /** Answers from the process's own map, the shared store, and the database. */
  local: number;
  shared: number;
  loaded: number;
}

/**
 * A `decode` for cached rows, or lists of rows, whose `fields` are timestamps: JSON turned them into
 * strings, and the code reading them expects dates.
 */
export function withDates<T>(...fields: string[]): (json: unknown) => T {
  const revive = (row: Record<string, unknown>) => {
    for (const field of fields) if (typeof row[field] === 'string') row[field] = new Date(row[field]);
    return row;
  };
  return (json) => (Array.isArray(json) ? json.map(revive) : revive(json as Record<string, unknown>)) as T;
}

/**
 * How long an invalidated key stays out of the caches: longer than the rest of the transaction that
 * made the change takes to commit (milliseconds, here). Reads meanwhile go to the database.
 */
export const HOLD_MS = 5_000;
/** A hold's prefix: not JSON, so no cached value can look like it. */
const HELD = 'held!';
const CHANNEL = 'cache:invalidate';

interface InvalidationMessage {
  cache: string;
  keys: string[];
}

type LocalEntry<T> = { value: T; until: number } | { held: true; until: number };

/**
 * The caches of records read on every request (users, the role catalogue): a small per-process map
 * in front of the key-value store, filled from the database on a miss. One pub/sub channel carries
 * every cache's invalidations to the other nodes.
 */
export class Caches {
  readonly #caches = new Map<string, SharedCache<unknown>>();
  readonly #broadcast: Broadcast<InvalidationMessage>;

  constructor(
    private readonly kv: KeyValueStore,
    private readonly clock: Clock,
    private readonly log: FastifyBaseLogger,
  ) {
    this.#broadcast = new Broadcast(kv, CHANNEL, log, (message, own) => {
      // A node's own invalidations took effect when they were made.
      if (!own) this.#caches.get(message.cache)?.holdLocally(message.keys);
    });
  }

  define<T>(name: string, options: CacheOptions<T>): Cache<T> {
    if (this.#caches.has(name)) throw new Error(`cache ${name} is defined twice`);
    const cache = new SharedCache<T>(name, options, this.kv, this.clock, this.log, this.#broadcast);
    this.#caches.set(name, cache as SharedCache<unknown>);
    return cache;
  }

  start(): Promise<void> {
    return this.#broadcast.start();
  }

  stop(): Promise<void> {
    return this.#broadcast.stop();
  }

  stats(): Record<string, CacheStats> {
    return Object.fromEntries([...this.#caches].map(([name, cache]) => [name, { ...cache.stats }]));
  }
}

class SharedCache<T> implements Cache<T> {
  readonly #local = new Map<string, LocalEntry<T>>();
  /** Counts invalidations seen here; a load that overlapped one is answered but not cached. */
  #invalidations = 0;
  readonly stats: CacheStats = { local: 0, shared: 0, loaded: 0 };
  readonly #logFailure = logAtMostEvery();

  constructor(
    private readonly name: string,
    private readonly options: CacheOptions<T>,
    private readonly kv: KeyValueStore,
    private readonly clock: Clock,
    private readonly log: FastifyBaseLogger,
    private readonly broadcast: Broadcast<InvalidationMessage>,
  ) {}

  async get(key: string, load: () => Promise<T | undefined>): Promise<T | undefined> {
    const now = this.clock.nowMs();
    const local = this.#local.get(key);
    if (local && local.until > now) {
      if (!('held' in local)) {
        this.stats.local++;
        return local.value;
      }
      this.stats.loaded++;
      return load();
    }
    return this.#readThrough(key, load);
  }

  /** From the shared store, else from `load` (stored for every node unless a hold or an invalidation says not to). */
  async #readThrough(key: string, load: () => Promise<T | undefined>): Promise<T | undefined> {
    const sharedKey = this.#sharedKey(key);
    const shared = await this.#safely(() => this.kv.get(sharedKey));
    const heldUntil = shared?.startsWith(HELD) ? Number(shared.slice(HELD.length)) : undefined;
    if (shared !== null && heldUntil === undefined) {
      this.stats.shared++;
      const value = this.#decode(shared);
      this.#remember(key, value);
      return value;
    }
    this.stats.loaded++;
    const seen = this.#invalidations;
    const value = await load();
    if (value === undefined || seen !== this.#invalidations) return value;
    if (heldUntil !== undefined) {
      // The shared slot keeps its hold until the store expires it; this node may keep what it read once the hold is over.
      if (heldUntil <= this.clock.nowMs()) this.#remember(key, value);
      return value;
    }
    // Only into an empty slot: a change made meanwhile on another node leaves its hold there.
    const stored = await this.#safely(() =>
      this.kv.setIfAbsent(sharedKey, JSON.stringify(value), this.options.sharedTtlSecs),
    );
    if (stored && seen === this.#invalidations) this.#remember(key, value);
    return value;
  }

  async invalidate(keys: string[]): Promise<void> {
    if (keys.length === 0) return;
    this.holdLocally(keys);
    // The store's expiry runs on its own clock; the hold's end, written in the value, on the service's.
    const hold = `${HELD}${this.clock.nowMs() + HOLD_MS}`;
    const ttlSecs = Math.ceil(HOLD_MS / 1000) + 1;
    await Promise.all(keys.map((key) => this.#safely(() => this.kv.set(this.#sharedKey(key), hold, ttlSecs))));
    await this.broadcast.publish({ cache: this.name, keys });
  }

  holdLocally(keys: string[]): void {
    this.#invalidations++;
    const until = this.clock.nowMs() + HOLD_MS;
    for (const key of keys) this.#local.set(key, { held: true, until });
    this.options.onInvalidated?.(keys);
  }

  #remember(key: string, value: T): void {
    if (this.#local.size >= (this.options.maxLocalEntries ?? 10_000)) this.#sweep();
    this.#local.set(key, { value, until: this.clock.nowMs() + this.options.localTtlMs });
  }

  /** Drops expired entries, and everything but the holds when that is not enough. */
  #sweep(): void {
    const now = this.clock.nowMs();
    for (const [key, entry] of this.#local) if (entry.until <= now) this.#local.delete(key);
    if (this.#local.size < (this.options.maxLocalEntries ?? 10_000)) return;
    for (const [key, entry] of this.#local) if (!('held' in entry)) this.#local.delete(key);
  }

  #decode(raw: string): T {
    const json: unknown = JSON.parse(raw);
    return this.options.decode ? this.options.decode(json) : (json as T);
  }

  #sharedKey(key: string): string {
    return `cache:${this.name}:${key}`;
  }

  /** The cache is an optimisation: when the store fails, the database answers and nothing is cached. */
  async #safely<R>(operation: () => Promise<R>): Promise<R | null> {
    try {
      return await operation();
    } catch (error) {
      this.#logFailure(
        this.log,
        'warn',
        { err: error, cache: this.name },
        'cache store unavailable; reading the database',
      );
      return null;
    }
  }
}
