/** What a batch commit says about one of its inputs: stored (`value`) or refused on its own (`error`). */
export type Outcome<T> = { value: T } | { error: unknown };

interface Options<In, Out> {
  /** Commits these inputs in one transaction; one outcome per input, in their order. */
  commit(inputs: In[]): Promise<Outcome<Out>[]>;
  /**
   * Work on a committed batch before its writers are answered (e.g. cache writes); it runs while the next
   * batch commits. Should it throw, the writers are answered all the same (their inputs are committed) and
   * the error goes to `afterCommitFailed`.
   */
  afterCommit(values: Out[]): Promise<void>;
  afterCommitFailed?(err: unknown): void;
  /** Whether a failed commit would fail every input the same way (the database is gone), not just one input's. */
  failsAll(err: unknown): boolean;
  /** The error a write gets once the writer is closed. */
  closed(): Error;
  maxBatch: number;
  /**
   * Batches committing at once (default 1). PostgreSQL commits several at a time on its connections (and
   * flushes their WAL together), so a batch need not wait for the previous one's round trips; the embedded
   * database has one connection, where more would only queue.
   */
  concurrency?: number;
}

interface Pending<In, Out> {
  input: In;
  resolve(value: Out): void;
  reject(err: unknown): void;
}

/**
 * Group commit. Writes that arrive while a commit runs wait for it and are then committed together, in one
 * transaction: one durable commit (one WAL flush) per batch instead of per write. An idle writer starts at
 * the end of the current turn of the event loop, so writes that arrived in the same turn share a commit and
 * nothing waits on a timer. `concurrency` batches commit at a time (one by default; the embedded database
 * has one connection anyway), and writes that arrive meanwhile wait for a free one. A write's promise resolves
 * only once its batch is committed.
 *
 * When a batch fails for a reason that may be one input's (a constraint, a bad value), its inputs are
 * committed again one by one, so every caller gets its own answer and no input fails for a neighbour.
 */
export function createGroupCommit<In, Out>(options: Options<In, Out>) {
  const queue: Pending<In, Out>[] = [];
  let running: Promise<void> | null = null;
  /** Batches committed whose writers are not answered yet (their `afterCommit` runs). */
  const finishing = new Set<Promise<void>>();
  let closed = false;

  async function run(): Promise<void> {
    await new Promise(setImmediate);
    const committing = new Set<Promise<void>>();
    while (queue.length > 0 || committing.size > 0) {
      while (queue.length > 0 && committing.size < (options.concurrency ?? 1)) {
        const batch: Promise<void> = commitBatch(queue.splice(0, options.maxBatch)).finally(() =>
          committing.delete(batch),
        );
        committing.add(batch);
      }
      await Promise.race(committing);
    }
    // In the same synchronous step as the last look at the queue: a write queued after it starts a new run.
    running = null;
  }

  async function commitBatch(batch: Pending<In, Out>[]): Promise<void> {
    let outcomes: Outcome<Out>[];
    try {
      outcomes = await options.commit(batch.map((pending) => pending.input));
    } catch (err) {
      if (batch.length === 1 || options.failsAll(err)) {
        for (const pending of batch) pending.reject(err);
        return;
      }
      outcomes = [];
      for (const pending of batch) outcomes.push(await commitAlone(pending.input));
    }
    const finished = finish(batch, outcomes).finally(() => finishing.delete(finished));
    finishing.add(finished);
  }

  async function commitAlone(input: In): Promise<Outcome<Out>> {
    try {
      return (await options.commit([input]))[0]!;
    } catch (error) {
      return { error };
    }
  }

  async function finish(batch: Pending<In, Out>[], outcomes: Outcome<Out>[]): Promise<void> {
    try {
      await options.afterCommit(outcomes.flatMap((outcome) => ('value' in outcome ? [outcome.value] : [])));
    } catch (err) {
      // Not answering would leave every writer of the batch waiting for good (and close() with them).
      options.afterCommitFailed?.(err);
    }
    batch.forEach((pending, i) => {
      const outcome = outcomes[i]!;
      if ('error' in outcome) pending.reject(outcome.error);
      else pending.resolve(outcome.value);
    });
  }

  return {
    write(input: In): Promise<Out> {
      if (closed) return Promise.reject(options.closed());
      const written = new Promise<Out>((resolve, reject) => queue.push({ input, resolve, reject }));
      running ??= run();
      return written;
    },

    /** Refuses new writes and resolves once every write already queued is committed (or refused) and answered. */
    async close(): Promise<void> {
      closed = true;
      await running;
      await Promise.all(finishing);
    },
  };
}
