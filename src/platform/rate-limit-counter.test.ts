import { describe, expect, it } from 'vitest';
import { localFirstCounter } from './rate-limit-counter.js';
import type { WindowCount } from './kv/index.js';

/** A shared store whose answers the test releases one by one, as Redis answers in its own time. */
function slowStore() {
  let total = 0;
  const waiting: (() => void)[] = [];
  return {
    hitWindow(_key: string, windowSecs: number, _at?: number, hits = 1): Promise<WindowCount> {
      total += hits;
      const count = total;
      return new Promise((resolve) => waiting.push(() => resolve({ count, resetAt: Math.floor(Date.now() / 1000) + windowSecs })));
    },
    answerAll: () => waiting.splice(0).forEach((answer) => answer()),
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
});
