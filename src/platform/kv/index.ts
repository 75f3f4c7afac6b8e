import { MemoryStore } from './memory.js';
import { RedisStore } from './redis.js';
import type { KeyValueStore } from './kv.js';

export type { KeyValueStore, WindowCount } from './kv.js';

export type KeyValueTarget = { kind: 'memory' } | { kind: 'redis'; url: string; namespace?: string };

export async function openKeyValueStore(target: KeyValueTarget): Promise<KeyValueStore> {
  if (target.kind === 'memory') return new MemoryStore();
  const store = new RedisStore(target);
  await store.connect();
  return store;
}
