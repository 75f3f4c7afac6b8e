import { windowOf, type KeyValueStore, type WindowCount, type WindowHits } from './kv/kv.js';

/** How long a node keeps hits of a bucket far from its limit before adding them to the shared count. */
export const DEFERRED_HITS_FLUSH_MS = 50;

interface WindowState {
  /** The shared count as last read (this node's flushed hits included). */
  known: number;
  /** Hits of this node not yet added to the shared count. */
  pending: number;
  /** Hits of this node sent to the shared count whose answer has not come back yet. */
  sending: number;
  resetAt: number;
  /** Any instant inside the window, to flush into the right one. */
  at: number;
}

/**
 * Counts rate-limit hits in the shared store (Redis) without a round trip on every request where
 * exactness buys nothing. A bucket's first hit on a node in a window is counted in the store at once;
 * after that, while the bucket is known to be less than half used, this node adds its hits locally and
 * sends them together every 50 ms; from half used on, every hit is counted in the store at once, so
 * the limit itself and the X-RateLimit-* headers (sent from half used on) are exact. What can slip
 * through is what other nodes counted in their last 50 ms before the bucket crossed half.
 *
 * The in-process store answers at once and needs none of this.
 */
export function localFirstCounter(
  kv: Pick<KeyValueStore, 'hitWindow' | 'hitWindows'>,
  onFlushFailed: (err: unknown) => void,
) {
  const windows = new Map<string, WindowState>();

  /** Sends every bucket's deferred hits to the store, all in one round trip. */
  const flush = (): void => {
    const now = Date.now();
    const sent: { state: WindowState; hits: WindowHits }[] = [];
    for (const [windowKey, state] of windows) {
      if (state.resetAt * 1000 <= now) {
        windows.delete(windowKey);
        continue;
      }
      if (state.pending === 0) continue;
      const hits = state.pending;
      state.pending = 0;
      state.sending += hits;
      const separator = windowKey.lastIndexOf('|');
      sent.push({
        state,
        hits: {
          key: windowKey.slice(0, separator),
          windowSecs: Number(windowKey.slice(separator + 1)),
          at: state.at,
          hits,
        },
      });
    }
    if (sent.length === 0) return;
    // (Lost when the store fails: the limiter fails open then anyway.) In a promise, so a store that throws at
    // once fails the flush as one that rejects does, never the timer.
    Promise.resolve()
      .then(() => kv.hitWindows(sent.map(({ hits }) => hits)))
      .then(
        (counted) => sent.forEach(({ state, hits }, i) => settled(state, hits.hits, counted[i]?.count)),
        (err: unknown) => {
          for (const { state, hits } of sent) settled(state, hits.hits);
          onFlushFailed(err);
        },
      );
  };
  const timer = setInterval(flush, DEFERRED_HITS_FLUSH_MS).unref();

  /** The store has answered (or failed) `hits` sent from `state`; `count` is the shared count it read. */
  function settled(state: WindowState, hits: number, count?: number): void {
    state.sending -= hits;
    if (count !== undefined) state.known = Math.max(state.known, count);
  }

  return {
    hit(key: string, windowSecs: number, limit: number): WindowCount | Promise<WindowCount> {
      const now = Date.now();
      const { index, resetAt } = windowOf(windowSecs, now);
      const windowKey = `${key}|${windowSecs}`;
      let state = windows.get(windowKey);
      if (state && windowOf(windowSecs, state.at).index !== index) state = undefined;
      // This node's hits still on their way to the store count too: without them the estimate would
      // drop while a flush is answered, and a hit then would pass as far from the limit.
      if (state && (state.known + state.sending + state.pending + 1) * 2 <= limit) {
        state.pending++;
        return { count: state.known + state.sending + state.pending, resetAt };
      }
      const hits = (state?.pending ?? 0) + 1;
      if (state) {
        state.pending = 0;
        state.sending += hits;
      }
      const sent = state;
      // Remembered once the store has answered: while it fails, every hit asks it (and fails open).
      return Promise.resolve(kv.hitWindow(key, windowSecs, now, hits)).then(
        (counted) => {
          if (sent) settled(sent, hits);
          const current = windows.get(windowKey) ?? { known: 0, pending: 0, sending: 0, resetAt, at: now };
          current.known = Math.max(current.known, counted.count);
          if (windowOf(windowSecs, current.at).index === index) windows.set(windowKey, current);
          else windows.set(windowKey, { known: counted.count, pending: 0, sending: 0, resetAt, at: now });
          return counted;
        },
        (err: unknown) => {
          if (sent) settled(sent, hits);
          throw err;
        },
      );
    },

    stop(): void {
      clearInterval(timer);
      flush();
    },
  };
}
