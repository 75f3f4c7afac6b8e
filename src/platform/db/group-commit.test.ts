import { describe, expect, it } from 'vitest';
import { createGroupCommit, type Outcome } from './group-commit.js';

describe('group commit', () => {
  it('answers every writer of a committed batch when its afterCommit throws, and reports the error', async () => {
    const failures: unknown[] = [];
    let failAfterCommit = true;
    const writer = createGroupCommit<number, number>({
      commit: async (inputs) =>
        inputs.map((input): Outcome<number> => (input < 0 ? { error: new Error('negative') } : { value: input * 10 })),
      afterCommit: async () => {
        // A fault hook: the first batch's follow-up work fails (a cache that went away mid-write).
        if (failAfterCommit) {
          failAfterCommit = false;
          throw new Error('cache down');
        }
      },
      afterCommitFailed: (err) => failures.push(err),
      failsAll: () => false,
      closed: () => new Error('closed'),
      maxBatch: 10,
    });
    // Written in one turn: one batch.
    const answers = await Promise.allSettled([writer.write(1), writer.write(-1), writer.write(2)]);
    expect(
      answers.map((answer) => (answer.status === 'fulfilled' ? answer.value : (answer.reason as Error).message)),
    ).toEqual([10, 'negative', 20]);
    expect(failures).toEqual([new Error('cache down')]);
    // The writer goes on, and closes.
    expect(await writer.write(3)).toBe(30);
    await writer.close();
  });

  it('commits up to `concurrency` batches at once; writes arriving meanwhile wait for a free one and go together', async () => {
    const batches: number[][] = [];
    const open: (() => void)[] = [];
    const writer = createGroupCommit<number, number>({
      commit: async (inputs) => {
        batches.push(inputs);
        await new Promise<void>((resolve) => open.push(resolve));
        return inputs.map((input) => ({ value: input }));
      },
      afterCommit: async () => undefined,
      failsAll: () => false,
      closed: () => new Error('closed'),
      maxBatch: 2,
      concurrency: 2,
    });
    const written = [1, 2, 3, 4, 5, 6].map((input) => writer.write(input));
    await new Promise(setImmediate);
    // Two batches of two commit at once; the third waits for one of them.
    expect(batches).toEqual([
      [1, 2],
      [3, 4],
    ]);
    const seventh = writer.write(7);
    open.shift()!();
    await written[1];
    await new Promise(setImmediate);
    expect(batches).toEqual([
      [1, 2],
      [3, 4],
      [5, 6],
    ]);
    while (open.length > 0 || batches.length < 4) {
      open.shift()?.();
      await new Promise(setImmediate);
    }
    expect(await Promise.all([...written, seventh])).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(batches).toEqual([[1, 2], [3, 4], [5, 6], [7]]);
    await writer.close();
  });
});
