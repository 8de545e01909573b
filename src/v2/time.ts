import { boundedMemo } from './bounded-memo.ts';

/** Formatted timestamps kept: a metric answer formats the same few timeslice bounds hundreds of times. */
const FORMATTED_MAX = 2048;
const formatSecond = boundedMemo(FORMATTED_MAX, (second: number) => `${new Date(second * 1000).toISOString().slice(0, 19)}+00:00`);

/** v2 timestamps: UTC, whole seconds, explicit `+00:00` offset (rest-v2-shapes.md conventions). */
export function isoSeconds(epochMs: number): string {
  // Whole seconds: every time in one second formats the same, so that second is the memo's key.
  return formatSecond(Math.floor(epochMs / 1000));
}
