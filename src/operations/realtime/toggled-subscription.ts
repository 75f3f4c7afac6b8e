import type { FastifyBaseLogger } from 'fastify';
import type { KeyValueStore } from '../../platform/kv/index.js';

/** How long a client's Subscribe waits for its node to join the pub/sub channel (Redis down: not forever). */
const JOIN_WAIT_MS = 1000;

/**
 * A pub/sub subscription held only while this node wants it: so the subscriber count of the channel says
 * whether any node has a listener, and a publisher with nobody to reach need not even build its message.
 * Joins and leaves run one after another, so the last wish wins whatever order they finish in.
 */
export function toggledSubscription(
  kv: KeyValueStore,
  channel: string,
  onMessage: (message: string) => void,
  log: FastifyBaseLogger,
) {
  let wanted = false;
  let leave: (() => Promise<void>) | undefined;
  let settled: Promise<void> = Promise.resolve();

  async function apply(): Promise<void> {
    if (wanted && !leave) leave = await kv.subscribe(channel, onMessage);
    else if (!wanted && leave) {
      const leaving = leave;
      leave = undefined;
      await leaving();
    }
  }

  return {
    /**
     * Joins or leaves the channel. Resolves once that is done (at most JOIN_WAIT_MS later), so a client told
     * it is subscribed receives every message published after that.
     */
    want(next: boolean): Promise<void> {
      wanted = next;
      settled = settled
        .then(apply)
        .catch((err: unknown) => log.warn({ err, channel }, 'could not join or leave a pub/sub channel'));
      let timer: NodeJS.Timeout | undefined;
      const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, JOIN_WAIT_MS).unref()));
      return Promise.race([settled, waited]).finally(() => clearTimeout(timer));
    },
  };
}
