/** Formatted timestamps kept: a metric answer formats the same few timeslice bounds hundreds of times. */
const FORMATTED_MAX = 2048;
const formatted = new Map<number, string>();

/** v2 timestamps: UTC, whole seconds, explicit `+00:00` offset (rest-v2-shapes.md conventions). */
export function isoSeconds(epochMs: number): string {
  // Whole seconds: every time in one second formats the same, so that second is the memo's key.
  const second = Math.floor(epochMs / 1000);
  let text = formatted.get(second);
  if (text === undefined) {
    text = `${new Date(epochMs).toISOString().slice(0, 19)}+00:00`;
    // Oldest first out: bounded whatever times answers carry.
    if (formatted.size >= FORMATTED_MAX) formatted.delete(formatted.keys().next().value as number);
    formatted.set(second, text);
  }
  return text;
}
