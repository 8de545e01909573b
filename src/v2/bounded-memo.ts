/**
 * A pure function's results kept for its last `max` distinct keys, oldest first out: for the
 * computations a request repeats (an HMAC of a key, a formatted time, a decoded GUID, an
 * expanded formula), bounded whatever keys clients send. In this process's memory only. A
 * computation that throws keeps nothing, so it throws again next time. Here, in the lowest
 * layer, so every stage can use it.
 */
export function boundedMemo<K, V>(max: number, compute: (key: K) => V): (key: K) => V {
  const kept = new Map<K, V>();
  return (key) => {
    const hit = kept.get(key);
    if (hit !== undefined || kept.has(key)) return hit as V;
    const value = compute(key);
    if (kept.size >= max) kept.delete(kept.keys().next().value as K);
    kept.set(key, value);
    return value;
  };
}
