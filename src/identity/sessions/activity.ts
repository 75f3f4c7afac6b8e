import type { FastifyBaseLogger } from 'fastify';

/** How often noted session activity is written to the database. */
export const ACTIVITY_FLUSH_INTERVAL_MS = 60_000;

/** Writes a batch of `[session id, last seen]` pairs; rows already newer stay as they are. */
export type ActivityWriter = (entries: [string, Date][]) => Promise<void>;

/**
 * Keeps sessions' last_activity_at current without a database write per
 * request: the auth hook notes each session request here (a map update), and
 * the latest time per session is written as one batched UPDATE every
 * ACTIVITY_FLUSH_INTERVAL_MS and when the app closes. A crash loses at most one
 * interval of activity times, which only feed the user's session list.
 */
export class ActivityRecorder {
  #pending = new Map<string, Date>();
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly write: ActivityWriter,
    private readonly log: FastifyBaseLogger,
    private readonly intervalMs = ACTIVITY_FLUSH_INTERVAL_MS,
  ) {}

  start(): void {
    // unref: a pending flush never keeps the process alive on its own.
    this.#timer ??= setInterval(() => void this.flush(), this.intervalMs).unref();
  }

  /** Stops the timer and writes what is still pending. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.flush();
  }

  note(sessionId: string, at: Date): void {
    const seen = this.#pending.get(sessionId);
    if (!seen || seen < at) this.#pending.set(sessionId, at);
  }

  /** Activity noted but not yet written, so readers can show the newest value. */
  pendingFor(sessionId: string): Date | undefined {
    return this.#pending.get(sessionId);
  }

  /** Writes everything noted so far; flushes never overlap. */
  flush(): Promise<void> {
    this.#flushing = this.#flushing.then(() => this.#writePending());
    return this.#flushing;
  }

  async #writePending(): Promise<void> {
    if (this.#pending.size === 0) return;
    const batch = this.#pending;
    this.#pending = new Map();
    try {
      await this.write([...batch]);
    } catch (err) {
      this.log.warn({ err, sessions: batch.size }, 'could not record session activity; retrying at the next flush');
      for (const [id, at] of batch) this.note(id, at);
    }
  }
}
