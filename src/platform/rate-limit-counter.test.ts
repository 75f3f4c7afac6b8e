import { describe, expect, it } from 'vitest';
import { localFirstCounter } from './rate-limit-counter.js';
import type { WindowCount, WindowHits } from './kv/index.js';

/** A shared store whose answers the test releases one by one, as Redis answers in its own time. */
function slowStore() {
  const totals = new Map<string, number>();
  const waiting: (() => void)[] = [];
  /** The hits of each call of hitWindows, by key. */
  const flushes: Record<string, number>[] = [];
  const count = (key: string, hits: number) => totals.set(key, (totals.get(key) ?? 0) + hits).get(key)!;
  const answer = <T>(value: T) => new Promise<T>((resolve) => waiting.push(() => resolve(value)));
  const resetAt = (windowSecs: number) => Math.floor(Date.now() / 1000) + windowSecs;
  return {
    hitWindow(key: string, windowSecs: number, _at?: number, hits = 1): Promise<WindowCount> {
      return answer({ count: count(key, hits), resetAt: resetAt(windowSecs) });
    },
    hitWindows(hits: readonly WindowHits[]): Promise<WindowCount[]> {
      flushes.push(Object.fromEntries(hits.map((hit) => [hit.key, hit.hits])));
      return answer(hits.map((hit) => ({ count: count(hit.key, hit.hits), resetAt: resetAt(hit.windowSecs) })));
    },
    flushes,
    answerAll: () => waiting.splice(0).forEach((release) => release()),
  };
}

describe('the local-first rate-limit counter', () => {
  it("counts this node's hits that are on their way to the store while their answer is outstanding", async () => {
    const store = slowStore();
    const counter = localFirstCounter(store, () => {});
    const hit = () => counter.hit('bucket', 3600, 100);
    const first = hit() as Promise<WindowCount>;
    store.answerAll();
    expect((await first).count).toBe(1);
    expect([hit(), hit()]).toEqual([expect.objectContaining({ count: 2 }), expect.objectContaining({ count: 3 })]);
    // The two local hits go to the store (stop flushes them); its answer has not come back yet.
    counter.stop();
    expect(hit()).toEqual(expect.objectContaining({ count: 4 }));
    store.answerAll();
    await new Promise(setImmediate);
    expect(hit()).toEqual(expect.objectContaining({ count: 5 }));
  });

  it("sends every bucket's deferred hits to the store in one call", async () => {
    const store = slowStore();
    const counter = localFirstCounter(store, () => {});
    // Each bucket's first hit is counted in the store at once; the next ones wait for the flush.
    const firsts = ['a', 'b', 'c'].map((key) => counter.hit(key, 3600, 100) as Promise<WindowCount>);
    store.answerAll();
    await Promise.all(firsts);
    for (const key of ['a', 'b', 'c', 'a']) void counter.hit(key, 3600, 100);
    counter.stop();
    await new Promise(setImmediate);
    expect(store.flushes).toEqual([{ a: 2, b: 1, c: 1 }]);
  });
});
