/**
 * Sets `key` in `map` as its most recently used entry (a Map keeps insertion order) and drops the least
 * recently used one beyond `max`: a small cache that keeps what is in use, without a dependency.
 */
export function setRecent<K, V>(map: Map<K, V>, key: K, value: V, max: number): V {
  map.delete(key);
  map.set(key, value);
  if (map.size > max) map.delete(map.keys().next().value!);
  return value;
}
