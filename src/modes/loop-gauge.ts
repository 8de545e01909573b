import { performance } from 'node:perf_hooks';

/**
 * How busy the event loop has been lately, 0 (idle) to 1 (never idle): the share of time the
 * loop spent running code rather than waiting for I/O (`performance.eventLoopUtilization()`),
 * averaged over the last `windowMs` or so. Shadow work is started only while this is low
 * (COMPARE_MAX_LOOP_UTILISATION, src/modes/shadow.ts), since callers share the loop with it.
 *
 * A time-weighted moving average, updated on each reading (no timer): the stretch since the
 * previous reading counts with weight 1 - e^(-elapsed/windowMs). So a reading after a long
 * quiet spell reflects that spell, and under load the value climbs to the load's level within
 * about one window, whatever the reading rate.
 */
export interface LoopSample {
  /** Milliseconds the loop has spent idle (waiting in the poll phase), since some fixed start. */
  idle: number;
  /** Milliseconds it has spent active, since the same start. */
  active: number;
}

export type LoopUtilisation = () => number;

export function createLoopGauge(options: { windowMs: number; sample?: () => LoopSample }): LoopUtilisation {
  const sample = options.sample ?? ((): LoopSample => performance.eventLoopUtilization());
  let last = sample();
  let value = 0;
  return () => {
    const now = sample();
    const idle = now.idle - last.idle;
    const active = now.active - last.active;
    const elapsed = idle + active;
    if (elapsed <= 0) return value;
    const weight = 1 - Math.exp(-elapsed / options.windowMs);
    value += (active / elapsed - value) * weight;
    last = now;
    return value;
  };
}
