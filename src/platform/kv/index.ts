import { MemoryStore } from './memory.js';
import type { KeyValueStore } from './kv.js';

export { KeyValueUnavailableError, type KeyValueStore, type WindowCount, type WindowHits } from './kv.js';
export { DatabaseStore, type DurableStore } from './durable.js';

export type KeyValueTarget = { kind: 'memory' } | { kind: 'redis'; url: string; namespace?: string };

export async function openKeyValueStore(target: KeyValueTarget): Promise<KeyValueStore> {
  if (target.kind === 'memory') return new MemoryStore();
  // Imported only when Redis is configured: the in-process default does not pay for ioredis.
  const { RedisStore } = await import('./redis.js');
  const store = new RedisStore(target);
  await store.connect();
  return store;
}
