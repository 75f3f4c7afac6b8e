import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { KeyValueStore } from './kv.js';
import { logAtMostEvery } from '../log-throttle.js';

/** How long a publisher waits to hear its own message back before answering anyway. */
const DELIVERY_WAIT_MS = 250;

/**
 * A pub/sub channel whose publisher waits (briefly) until it hears its own message back: the store
 * delivers to every subscriber at once, so by then the other nodes have it too, and a response that
 * follows a change does not race ahead of their caches.
 */
export class Broadcast<M> {
  readonly #awaitingDelivery = new Map<string, () => void>();
  #unsubscribe: (() => Promise<void>) | undefined;
  readonly #logFailure = logAtMostEvery();

  constructor(
    private readonly kv: KeyValueStore,
    private readonly channel: string,
    private readonly log: FastifyBaseLogger,
    /** `own`: this node published it (and acted on it when it did). */
    private readonly onMessage: (message: M, own: boolean) => void,
  ) {}

  async start(): Promise<void> {
    this.#unsubscribe = await this.kv.subscribe(this.channel, (raw) => this.#receive(raw));
  }

  async stop(): Promise<void> {
    await this.#unsubscribe?.();
  }

  /** False when the store did not take the message (the other nodes rely on their short local expiry then). */
  async publish(message: M): Promise<boolean> {
    const id = randomUUID();
    let timer: NodeJS.Timeout | undefined;
    const delivered = new Promise<void>((resolve) => {
      this.#awaitingDelivery.set(id, resolve);
      timer = setTimeout(resolve, DELIVERY_WAIT_MS);
    });
    try {
      await this.kv.publish(this.channel, JSON.stringify({ id, message }));
      await delivered;
      return true;
    } catch (err) {
      this.#logFailure(this.log, 'warn', { err, channel: this.channel }, 'could not publish to the other nodes');
      return false;
    } finally {
      clearTimeout(timer);
      this.#awaitingDelivery.delete(id);
    }
  }

  #receive(raw: string): void {
    let envelope: { id: string; message: M };
    try {
      envelope = JSON.parse(raw) as { id: string; message: M };
    } catch {
      this.log.warn({ channel: this.channel }, 'ignoring a malformed message');
      return;
    }
    const own = this.#awaitingDelivery.get(envelope.id);
    own?.();
    this.onMessage(envelope.message, Boolean(own));
  }
}
