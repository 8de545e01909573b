/**
 * Drops a cache's expired entries every `everyMs`, without keeping the cache alive: the timer
 * holds it by a WeakRef and stops once it has been collected. (A plain interval closing over
 * the cache kept every app a process ever built, with its bounded-but-large caches, forever.)
 */
export function purgeStaleEvery(cache: { purgeStale(): unknown }, everyMs: number): NodeJS.Timeout {
  const ref = new WeakRef(cache);
  const timer = setInterval(() => {
    const live = ref.deref();
    if (live === undefined) clearInterval(timer);
    else live.purgeStale();
  }, everyMs);
  timer.unref();
  return timer;
}
