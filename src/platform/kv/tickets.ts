import { hashToken, newToken } from '../auth/tokens.js';
import type { KeyValueStore } from './kv.js';

/**
 * Short-lived, single-use tickets that stand for something the server keeps (a grant). A ticket is
 * random (256 bits), stored only as its hash, and redeemed at most once on any node: the redeemer
 * claims it with set-if-absent, so of two racing redemptions exactly one gets the grant.
 */
export function singleUseTickets<T>(
  kv: Pick<KeyValueStore, 'get' | 'set' | 'setIfAbsent' | 'delete'>,
  options: { prefix: string; namespace: string; ttlSecs: number },
) {
  const keyOf = (ticket: string) => `${options.namespace}:${hashToken(ticket)}`;
  return {
    async issue(grant: T): Promise<string> {
      const ticket = newToken(options.prefix);
      await kv.set(keyOf(ticket), JSON.stringify(grant), options.ttlSecs);
      return ticket;
    },

    /** The grant, once; undefined for an unknown, expired or already redeemed ticket. */
    async redeem(ticket: string): Promise<T | undefined> {
      const key = keyOf(ticket);
      const stored = await kv.get(key);
      if (!stored || !(await kv.setIfAbsent(`${key}:claimed`, '1', options.ttlSecs))) return undefined;
      await kv.delete(key);
      return JSON.parse(stored) as T;
    },
  };
}
