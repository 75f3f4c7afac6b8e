import type { Clock } from '../src/platform/clock.js';

/** A clock tests can move: it runs with real time, shifted by whatever `advance` added, unless frozen. */
export interface TestClock extends Clock {
  advance(ms: number): void;
  /** Stops time at its current reading (or at `at`); `advance` still moves it. */
  freeze(at?: Date): void;
}

export function createTestClock(): TestClock {
  let offsetMs = 0;
  let frozenAt: number | undefined;
  const nowMs = () => frozenAt ?? Date.now() + offsetMs;
  return {
    now: () => new Date(nowMs()),
    nowMs,
    advance(ms) {
      if (frozenAt === undefined) offsetMs += ms;
      else frozenAt += ms;
    },
    freeze(at) {
      frozenAt = at?.getTime() ?? Date.now() + offsetMs;
    },
  };
}
