import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { KeyValueStore } from './kv.js';
import { logAtMostEvery } from '../log-throttle.js';

/** How long a publisher waits for every node to confirm a message before answering anyway. */
const DELIVERY_WAIT_MS = 250;

interface Delivery {
  /** Nodes that confirmed the message so far (this one by hearing it back). */
  confirmed: number;
  /** Nodes the store handed it to; unknown until PUBLISH answers, which confirmations may precede. */
  nodes?: number;
  done: () => void;
}

const complete = (delivery: Delivery) => delivery.nodes !== undefined && delivery.confirmed >= delivery.nodes;

/**
 * A pub/sub channel whose publisher waits (briefly) until every node has acted on its message: the store
 * says how many nodes it handed the message to, each other node confirms on a second channel once it
 * has acted, and this node hears its own message back. So a response that follows a change does not race
 * ahead of another node's cache: nodes read their sockets independently, and without the confirmation
 * a request sent to another node right after the answer could be served before that node read the message.
 */
export class Broadcast<M> {
  readonly #deliveries = new Map<string, Delivery>();
  readonly #unsubscribe: (() => Promise<void>)[] = [];
  readonly #logFailure = logAtMostEvery();

  constructor(
    private readonly kv: KeyValueStore,
    private readonly channel: string,
    private readonly log: FastifyBaseLogger,
    /** `own`: this node published it (and acted on it when it did). */
    private readonly onMessage: (message: M, own: boolean) => void,
  ) {}

  get #confirmations(): string {
    return `${this.channel}:confirmed`;
  }

  async start(): Promise<void> {
    this.#unsubscribe.push(await this.kv.subscribe(this.#confirmations, (id) => this.#confirmed(id)));
    this.#unsubscribe.push(await this.kv.subscribe(this.channel, (raw) => this.#receive(raw)));
  }

  async stop(): Promise<void> {
    await Promise.all(this.#unsubscribe.splice(0).map((unsubscribe) => unsubscribe()));
  }

  /** False when the store did not take the message (the other nodes rely on their short local expiry then). */
  async publish(message: M): Promise<boolean> {
    const id = randomUUID();
    let timer: NodeJS.Timeout | undefined;
    const delivery: Delivery = { confirmed: 0, done: () => undefined };
    const delivered = new Promise<void>((resolve) => {
      delivery.done = resolve;
      timer = setTimeout(resolve, DELIVERY_WAIT_MS);
    });
    this.#deliveries.set(id, delivery);
    try {
      delivery.nodes = await this.kv.publish(this.channel, JSON.stringify({ id, message }));
      if (complete(delivery)) delivery.done();
      await delivered;
      return true;
    } catch (err) {
      this.#logFailure(this.log, 'warn', { err, channel: this.channel }, 'could not publish to the other nodes');
      return false;
    } finally {
      clearTimeout(timer);
      this.#deliveries.delete(id);
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
    const own = this.#deliveries.has(envelope.id);
    this.onMessage(envelope.message, own);
    if (own) this.#confirmed(envelope.id);
    else
      this.kv
        .publish(this.#confirmations, envelope.id)
        .catch((err: unknown) => this.#logFailure(this.log, 'warn', { err }, 'could not confirm a message'));
  }

  #confirmed(id: string): void {
    const delivery = this.#deliveries.get(id);
    if (!delivery) return;
    delivery.confirmed++;
    if (complete(delivery)) delivery.done();
  }
}
