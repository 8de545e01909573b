/** v2 timestamps: UTC, whole seconds, explicit `+00:00` offset (rest-v2-shapes.md conventions). */
export function isoSeconds(epochMs: number): string {
  return `${new Date(epochMs).toISOString().slice(0, 19)}+00:00`;
}
