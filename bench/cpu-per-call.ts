/**
 * CPU µs per call of `op` over `n` calls (user + system, process.cpuUsage). Each call returns a
 * number that is summed and checked, so the engine cannot drop the work as unused.
 */
export function cpuRound(op: () => number, n: number): number {
  const start = process.cpuUsage();
  let sink = 0;
  for (let i = 0; i < n; i++) sink += op();
  const used = process.cpuUsage(start);
  if (sink < 0) throw new Error('unreachable');
  return (used.user + used.system) / n;
}
