import { EventEmitter } from 'node:events';
import {
  replaces,
  windowOf,
  type KeepOutcome,
  type KeptRecord,
  type KeyValueStore,
  type WindowCount,
  type WindowHits,
} from './kv.js';

interface Entry {
  value: string;
  expiresAt: number; // epoch ms; Infinity when it never expires
}

const SWEEP_INTERVAL_MS = 30_000;

/** Single-process store: the default when no REDIS_URL is configured. */
export class MemoryStore implements KeyValueStore {
  readonly kind = 'memory';
  readonly #entries = new Map<string, Entry>();
  /** Window counters apart from the strings: counted in place, no text round trip per hit. */
  readonly #windows = new Map<string, { count: number; expiresAt: number }>();
  readonly #bus = new EventEmitter().setMaxListeners(0);
  readonly #sweeper = setInterval(() => this.#sweep(), SWEEP_INTERVAL_MS).unref();

  async get(key: string): Promise<string | null> {
    return this.#live(key)?.value ?? null;
  }

  async getMany(keys: readonly string[]): Promise<(string | null)[]> {
    const now = Date.now();
    return keys.map((key) => this.#live(key, now)?.value ?? null);
  }

  async set(key: string, value: string, ttlSecs?: number): Promise<void> {
    this.#entries.set(key, { value, expiresAt: expiry(ttlSecs) });
  }

  async delete(key: string): Promise<void> {
    this.#entries.delete(key);
  }

  async setIfAbsent(key: string, value: string, ttlSecs: number): Promise<boolean> {
    if (this.#live(key)) return false;
    this.#entries.set(key, { value, expiresAt: expiry(ttlSecs) });
    return true;
  }

  async keepNewest(entries: readonly KeptRecord[], ttlSecs: number, ifAbsent: 'set' | 'skip'): Promise<KeepOutcome[]> {
    return entries.map(({ key, value }) => {
      const current = this.#live(key);
      if (!current && ifAbsent === 'skip') return 'absent';
      if (current && !replaces(value, current.value)) return 'kept';
      this.#entries.set(key, { value, expiresAt: expiry(ttlSecs) });
      return 'stored';
    });
  }

  hitWindow(key: string, windowSecs: number, now = Date.now(), hits = 1): WindowCount {
    const { index, resetAt } = windowOf(windowSecs, now);
    const windowKey = `${key}:${index}`;
    const window = this.#windows.get(windowKey);
    if (window && window.expiresAt > now) return { count: (window.count += hits), resetAt };
    this.#windows.set(windowKey, { count: hits, expiresAt: resetAt * 1000 });
    return { count: hits, resetAt };
  }

  async hitWindows(hits: readonly WindowHits[]): Promise<WindowCount[]> {
    return hits.map(({ key, windowSecs, at, hits: count }) => this.hitWindow(key, windowSecs, at, count));
  }

  async unhitWindow(key: string, windowSecs: number, now: number): Promise<void> {
    const window = this.#windows.get(`${key}:${windowOf(windowSecs, now).index}`);
    if (window && window.count > 0) window.count--;
  }

  async resetWindow(key: string, windowSecs: number, now = Date.now()): Promise<void> {
    this.#windows.delete(`${key}:${windowOf(windowSecs, now).index}`);
  }

  async publish(channel: string, message: string): Promise<number> {
    // Delivered asynchronously, as Redis would; this process is the one node listening, or none.
    queueMicrotask(() => this.#bus.emit(channel, message));
    return this.#bus.listenerCount(channel) > 0 ? 1 : 0;
  }

  async subscribers(channel: string): Promise<number> {
    return this.#bus.listenerCount(channel);
  }

  async subscribe(channel: string, onMessage: (message: string) => void): Promise<() => Promise<void>> {
    this.#bus.on(channel, onMessage);
    return async () => {
      this.#bus.off(channel, onMessage);
    };
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    this.#bus.removeAllListeners();
    this.#entries.clear();
    this.#windows.clear();
  }

  #live(key: string, now = Date.now()): Entry | undefined {
    const entry = this.#entries.get(key);
    if (entry && entry.expiresAt <= now) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry;
  }

  #sweep(): void {
    const now = Date.now();
    for (const entries of [this.#entries, this.#windows]) {
      for (const [key, entry] of entries) if (entry.expiresAt <= now) entries.delete(key);
    }
  }
}

function expiry(ttlSecs: number | undefined): number {
  return ttlSecs === undefined ? Infinity : Date.now() + ttlSecs * 1000;
}
